package main

// The sync --watch processes under test: one for the whole clusterset (host mode) or one per
// member acting for it alone (per-member mode, sync --local), each started with its metrics and
// health endpoints on loopback, and read through their metrics (writes, empty queues, a saved
// scrape), summed over the processes.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// syncMode is where sync runs: one process acting for every member (host, the default), or one
// process per member acting for it alone (per-member: sync --local=memberK in every member).
type syncMode string

const (
	modeHost      syncMode = install.ModeHost
	modePerMember syncMode = install.ModePerMember
)

// parseMode reads -mode (and a results file's "mode"): empty is host, as every run before modes.
func parseMode(s string) (syncMode, error) {
	switch m := syncMode(s); m {
	case "", modeHost:
		return modeHost, nil
	case modePerMember:
		return m, nil
	}
	return "", fmt.Errorf("-mode %q: must be %s or %s", s, modeHost, modePerMember)
}

// syncProc is one sync --watch process: the member it acts for ("": every one) and its metrics.
type syncProc struct {
	local   string
	cmd     *exec.Cmd
	metrics string
}

// otherSyncs names, in the CPU accounting, the syncs of per-member mode besides the measured one.
const otherSyncs = "sync, other members"

// binaryVersion is what `kubectl mcs version` says of the binary ("" if it says nothing).
func binaryVersion(binary string) string {
	out, err := exec.Command(binary, "version", "-o", "json").Output()
	if err != nil {
		return ""
	}
	var v struct{ Version string }
	_ = json.Unmarshal(out, &v)
	return v.Version
}

// locals are the --local of each process the mode starts, the measured one first: host mode's
// one process ("") or, per member, the first context (an exporter, and an importer as every
// member is) and then the others.
func locals(mode syncMode, contexts []string) []string {
	if mode == modePerMember {
		return contexts
	}
	return []string{""}
}

// loopbackAddrs are n free ports on loopback, all held until all are chosen so none repeats.
func loopbackAddrs(n int) ([]string, error) {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// startSyncs starts the mode's processes; the first is the one measured (b.measured). Its log is
// syncLog, the others' sync-MEMBER.log beside it.
func (b *bench) startSyncs() error {
	ls := locals(b.mode, b.contexts)
	addrs, err := loopbackAddrs(2 * len(ls))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for i, local := range ls {
		path := syncLog
		if i > 0 {
			path = filepath.Join(outDir, "sync-"+local+".log")
		}
		p, err := b.startSync(local, addrs[2*i], addrs[2*i+1], path)
		if err != nil {
			b.stopSyncs()
			return err
		}
		b.syncs = append(b.syncs, p)
	}
	return nil
}

func (b *bench) startSync(local, metricsAddr, healthAddr, logPath string) (*syncProc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig", b.kubeconfig, "sync", "--watch", "-n", ns,
		"--contexts", strings.Join(b.contexts, ","), "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", healthAddr}
	if local != "" {
		args = append(args, "--local", local)
	}
	if b.qps > 0 {
		args = append(args, "--kube-api-qps", strconv.FormatFloat(b.qps, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(b.burst))
	}
	if b.profileDir != "" {
		args = append(args, "--profiling")
	}
	if b.workers > 0 {
		args = append(args, "--workers", strconv.Itoa(b.workers))
	}
	cmd := exec.Command(b.binary, args...)
	dieWithBench(cmd)
	if b.memoryLimitMiB > 0 {
		cmd.Env = append(os.Environ(), install.MemoryLimitEnv+"="+strconv.FormatInt(int64(b.memoryLimitMiB*(1<<20)), 10))
	}
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Start()
	log.Close() // the child holds its own descriptor
	return &syncProc{local: local, cmd: cmd, metrics: "http://" + metricsAddr + "/metrics"}, err
}

// measured is the process whose RSS, CPU and profiles are the run's own figures.
func (b *bench) measured() *syncProc { return b.syncs[0] }

// stopSyncs ends every process started, each by its PID, and waits for it.
func (b *bench) stopSyncs() {
	for _, p := range b.syncs {
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			_ = p.cmd.Wait()
		}
	}
	b.syncs = nil
}

// syncPIDs names the processes for the CPU accounting: the measured one "sync", the others
// otherSyncs.
func (b *bench) syncPIDs() map[int]string {
	out := map[int]string{}
	for i, p := range b.syncs {
		if p.cmd.Process == nil {
			continue
		}
		out[p.cmd.Process.Pid] = "sync"
		if i > 0 {
			out[p.cmd.Process.Pid] = otherSyncs
		}
	}
	return out
}

// peakRSSOf is the measured process's peak RSS and the sum of every process's, in MiB.
func (b *bench) peakRSSOf() (measured, all float64, err error) {
	for i, p := range b.syncs {
		v, err := peakRSS(p.cmd.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		if i == 0 {
			measured = v
		}
		all += v
	}
	return measured, all, nil
}

func (b *bench) metricsURLs() []string {
	out := make([]string, len(b.syncs))
	for i, p := range b.syncs {
		out[i] = p.metrics
	}
	return out
}

// scrapeSum is metric name (with labels, as promtext.Sum takes them) summed over every URL: one
// process's figure in host mode, the clusterset's in per-member mode.
func scrapeSum(urls []string, name string, labels ...string) (float64, error) {
	var sum float64
	for _, u := range urls {
		v, _, err := promtext.Scrape(u, name, labels...)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// saveMetrics keeps a scrape for reading the writes by kind and verb: every process's, one after
// the other, each headed by a comment naming it, so that a sum over the file is the processes'.
func (b *bench) saveMetrics(path string) {
	var all []byte
	for _, p := range b.syncs {
		resp, err := http.Get(p.metrics)
		if err != nil {
			return
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(b.syncs) > 1 {
			all = append(all, fmt.Sprintf("# sync --local=%s\n", p.local)...)
		}
		all = append(all, data...)
	}
	_ = os.WriteFile(path, all, 0o644)
}

// writes is the API write counter summed over the processes (optionally for some labels).
func (b *bench) writes(labels ...string) (int, error) {
	v, err := scrapeSum(b.metricsURLs(), "kubectl_mcs_writes_total", labels...)
	return int(v), err
}

// quiet waits until every queue is empty and the write counter has not moved for a second.
func (b *bench) quiet(ctx context.Context) (int, error) {
	last, since := -1, time.Now()
	for {
		w, err := b.writes()
		if err != nil {
			return 0, err
		}
		depth, err := scrapeSum(b.metricsURLs(), "kubectl_mcs_queue_depth")
		if err != nil {
			return 0, err
		}
		if w != last || depth > 0 {
			last, since = w, time.Now()
		} else if time.Since(since) > time.Second {
			return w, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
