package main

// The sync --watch process under test: started with its metrics on loopback, and read through
// them (writes, an empty queue, a saved scrape).

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

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

func (b *bench) startSync() (*exec.Cmd, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b.metrics = "http://" + l.Addr().String() + "/metrics"
	addr := l.Addr().String()
	l.Close()
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(syncLog)
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig", b.kubeconfig, "sync", "--watch", "-n", ns,
		"--contexts", strings.Join(b.contexts, ","), "--metrics-bind-address", addr}
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
	return cmd, err
}

// saveMetrics keeps a scrape for reading the writes by kind and verb.
func (b *bench) saveMetrics(path string) {
	resp, err := http.Get(b.metrics)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	_ = os.WriteFile(path, data, 0o644)
}

// writes is the sync process's API write counter (optionally for one cluster label).
func (b *bench) writes(labels ...string) (int, error) {
	v, _, err := promtext.Scrape(b.metrics, "kubectl_mcs_writes_total", labels...)
	return int(v), err
}

// quiet waits until the queue is empty and the write counter has not moved for a second.
func (b *bench) quiet(ctx context.Context) (int, error) {
	last, since := -1, time.Now()
	for {
		w, err := b.writes()
		if err != nil {
			return 0, err
		}
		depth, _, err := promtext.Scrape(b.metrics, "kubectl_mcs_queue_depth")
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
