package main

// What the members themselves cost (make bench-clusters): the RSS and CPU of each member's
// kube-apiserver and etcd. The test bed runs them as plain processes from
// TESTBED_DIR/kwok/clusters/NAME/bin/, next to the kubeconfig, so they are found by the path of
// their program; on any other setup the figures are left out.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BedUse is what the members' processes used, each figure a mean per member.
type BedUse struct {
	Members int `json:"members"`
	// Before init, holding nothing of the bench's.
	EmptyAPIServerRSSMiB float64 `json:"empty_apiserver_rss_mib"`
	EmptyEtcdRSSMiB      float64 `json:"empty_etcd_rss_mib"`
	// After the idle phase, holding the clusterset (and what the floors wrote).
	APIServerRSSMiB float64 `json:"apiserver_rss_mib"`
	EtcdRSSMiB      float64 `json:"etcd_rss_mib"`
	// Share of one core the apiserver and etcd used during the idle phase, sync running.
	IdleCPUPct float64 `json:"idle_cpu_pct"`
	// CPU seconds of every member's apiserver and etcd together during converge and the replay.
	ConvergeCPUS float64 `json:"converge_cpu_s"`
	ReplayCPUS   float64 `json:"replay_cpu_s"`
}

// bedProc is one member process as read from /proc.
type bedProc struct {
	member, program string
	rssMiB, cpuS    float64
}

// bedSample reads the member processes of the clusters named (apiserver and etcd only).
func bedSample(root string, members []string) []bedProc {
	if root == "" {
		return nil
	}
	want := map[string]bool{}
	for _, m := range members {
		want[m] = true
	}
	var out []bedProc
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(root, strings.SplitN(string(cmd), "\x00", 2)[0])
		parts := strings.Split(rel, string(filepath.Separator))
		if err != nil || len(parts) != 3 || parts[1] != "bin" || !want[parts[0]] {
			continue
		}
		if parts[2] != "kube-apiserver" && parts[2] != "etcd" {
			continue
		}
		p := bedProc{member: parts[0], program: parts[2]}
		if st, err := os.ReadFile("/proc/" + d.Name() + "/stat"); err == nil {
			s := string(st)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 22 {
				ut, _ := strconv.ParseFloat(f[11], 64)
				kt, _ := strconv.ParseFloat(f[12], 64)
				pages, _ := strconv.ParseFloat(f[21], 64)
				p.cpuS, p.rssMiB = (ut+kt)/clockTicks, pages*float64(os.Getpagesize())/(1<<20)
			}
		}
		out = append(out, p)
	}
	return out
}

// bedRoot is where the test bed next to the kubeconfig keeps its clusters ("" if there is none).
func bedRoot(kubeconfig string) string {
	root := filepath.Join(filepath.Dir(kubeconfig), "kwok", "clusters")
	if _, err := os.Stat(root); err != nil {
		return ""
	}
	return root
}

// meanRSS is the mean RSS per member of one program.
func meanRSS(ps []bedProc, program string, members int) float64 {
	var sum float64
	for _, p := range ps {
		if p.program == program {
			sum += p.rssMiB
		}
	}
	return round2(sum / float64(max(members, 1)))
}

// cpuBetween is the CPU seconds every member process used from a to b.
func cpuBetween(a, b []bedProc) float64 {
	before := map[string]float64{}
	for _, p := range a {
		before[p.member+"/"+p.program] = p.cpuS
	}
	var sum float64
	for _, p := range b {
		sum += p.cpuS - before[p.member+"/"+p.program]
	}
	return round2(sum)
}
