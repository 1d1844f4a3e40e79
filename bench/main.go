// Command bench measures `kubectl mcs sync --watch` on the local test bed against floors taken in
// the same run: see BENCHMARKS.md. `make bench` starts the test bed and runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type config struct {
	kubeconfig, binary string
	contexts           []string // the first two export, every one imports
	services, samples  int
	statusServices     int
	idle               time.Duration
	out, markdown      string
}

// Results is bench/results.json.
type Results struct {
	Date     string `json:"date"`
	Machine  string `json:"machine"`
	Services int    `json:"services"`
	Clusters int    `json:"clusters"`
	Samples  int    `json:"samples"`

	PropagationP50 float64 `json:"propagation_p50_ms"`
	PropagationP99 float64 `json:"propagation_p99_ms"`
	FloorP50       float64 `json:"floor_p50_ms"`
	FloorP99       float64 `json:"floor_p99_ms"`

	ConvergeS      float64 `json:"converge_s"`
	ConvergeFloorS float64 `json:"converge_floor_s"`
	ConvergeWrites int     `json:"converge_writes"`

	WritesPerChange   float64 `json:"writes_per_change"`
	ImportingClusters int     `json:"importing_clusters"`
	IdleWrites        int     `json:"idle_writes"`
	IdleSeconds       float64 `json:"idle_seconds"`
	PeakRSSMiB        float64 `json:"peak_rss_mib"`

	StatusServices int     `json:"status_services,omitempty"`
	StatusS        float64 `json:"status_s,omitempty"`
	StatusFloorS   float64 `json:"status_floor_s,omitempty"`

	DiagnoseS      float64 `json:"diagnose_s,omitempty"`
	DiagnoseFloorS float64 `json:"diagnose_floor_s,omitempty"`
	DiagnoseChecks int     `json:"diagnose_results,omitempty"`
	DiagnoseFailed int     `json:"diagnose_failed,omitempty"`
}

func main() {
	c := config{}
	flag.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "test-bed kubeconfig")
	flag.StringVar(&c.binary, "binary", "bin/kubectl-mcs", "kubectl-mcs binary under test")
	contexts := flag.String("contexts", "member1,member2,member3", "clusterset; the first two export")
	flag.IntVar(&c.services, "services", envInt("BENCH_SERVICES", 200), "exported services (BENCH_SERVICES)")
	flag.IntVar(&c.samples, "samples", envInt("BENCH_SAMPLES", 100), "propagation samples (BENCH_SAMPLES)")
	flag.IntVar(&c.statusServices, "status-services", envInt("BENCH_STATUS_SERVICES", 1000), "exported services when timing status -A (BENCH_STATUS_SERVICES; 0 skips)")
	flag.DurationVar(&c.idle, "idle", 60*time.Second, "idle period counted for writes")
	flag.StringVar(&c.out, "out", "bench/results.json", "results file")
	flag.StringVar(&c.markdown, "markdown", "BENCHMARKS.md", "file whose generated section is rewritten (empty: none)")
	flag.Parse()
	c.contexts = strings.Split(*contexts, ",")
	if len(c.contexts) < 3 {
		fail(fmt.Errorf("--contexts: need at least three clusters"))
	}
	res, err := run(context.Background(), c)
	if err != nil {
		fail(err)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(c.out, append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
	table := markdownTable(res)
	fmt.Println(table)
	if c.markdown != "" {
		if err := rewriteSection(c.markdown, table); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func machine() string {
	return fmt.Sprintf("%d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}
