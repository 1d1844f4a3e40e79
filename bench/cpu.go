package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CPU accounting of a phase: on a machine that holds the members too, a phase is bound by the CPU
// every process on it uses, not only by what the one being measured does. The CPU seconds each
// program used during converge and during the replay floor say where a gap between the two comes
// from: sync's own work, or the apiservers' (and whether the machine was idle at all).

// CPUUse is the CPU a phase used, by program (CPU seconds), and the machine's idle share.
type CPUUse struct {
	WallS     float64            `json:"wall_s"`
	IdlePct   float64            `json:"idle_pct"`
	ByProgram map[string]float64 `json:"by_program"`
}

type cpuSample struct {
	at          time.Time
	byProgram   map[string]float64
	idle, total float64 // machine jiffies from /proc/stat
}

// clockTicks is USER_HZ, 100 on every Linux port that matters here.
const clockTicks = 100

// sampleCPU reads every process's CPU time, named by program; the syncs (by PID, named as
// bench.syncPIDs names them) and this process are named for what they are. Without /proc it is
// empty, and the phase reports nothing.
func sampleCPU(syncs map[int]string) cpuSample {
	s := cpuSample{at: time.Now(), byProgram: map[string]float64{}}
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			s.total += n
			if i == 3 || i == 4 { // idle, iowait
				s.idle += n
			}
		}
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(data)
		open, end := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(st[end+1:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		s.byProgram[programName(pid, syncs, st[open+1:end])] += (utime + stime) / clockTicks
	}
	return s
}

// programName groups processes: the kernel truncates names to 15 bytes.
func programName(pid int, syncs map[int]string, comm string) string {
	if name, ok := syncs[pid]; ok {
		return name
	}
	switch {
	case pid == os.Getpid():
		return "bench"
	case comm == "kube-controller":
		return "kube-controller-manager"
	case strings.HasPrefix(comm, "kworker/"):
		return "kernel"
	}
	return comm
}

// since is the use between an earlier sample and s; programs below 1% of it are summed as
// "other", except the syncs measured (at 20 members one member's sync used under 1% while the
// changes propagated, and its CPU per change read 0).
func (s cpuSample) since(before cpuSample) *CPUUse {
	if len(s.byProgram) == 0 || s.total <= before.total {
		return nil
	}
	u := &CPUUse{WallS: s.at.Sub(before.at).Seconds(), ByProgram: map[string]float64{},
		IdlePct: 100 * (s.idle - before.idle) / (s.total - before.total)}
	var all float64
	d := map[string]float64{}
	for p, v := range s.byProgram {
		if v -= before.byProgram[p]; v > 0 {
			d[p] = v
			all += v
		}
	}
	for p, v := range d {
		if v < all/100 && p != "sync" && p != otherSyncs {
			p = "other"
		}
		u.ByProgram[p] += round2(v)
	}
	return u
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// String: the programs by CPU seconds, largest first.
func (u *CPUUse) String() string {
	if u == nil {
		return "no CPU accounting (no /proc)"
	}
	ps := make([]string, 0, len(u.ByProgram))
	for p := range u.ByProgram {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return u.ByProgram[ps[i]] > u.ByProgram[ps[j]] })
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s %.1f", p, u.ByProgram[p])
	}
	return fmt.Sprintf("%.0f s, %.0f%% idle; CPU seconds: %s", u.WallS, u.IdlePct, strings.Join(parts, ", "))
}
