// Command bench measures `kubectl mcs sync --watch` on the local test bed against floors taken in
// the same run: see BENCHMARKS.md. `make bench` starts the test bed and runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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

	// bench-scale
	scale         bool    // count cached endpoints, save profiles
	qps           float64 // sync's --kube-api-qps and the floors' client (0: sync's default)
	burst         int
	busyRate      int     // other services changed per second during the busy samples (0: none)
	workers       int     // sync's --workers, and the write floor's requests in flight per cluster
	floorFraction float64 // share of the converge writes the write floor makes (1: all)
	profileDir    string  // pprof profiles of sync saved here (empty: no --profiling)
	watchedReplay bool    // replay the converge writes a second time, watched

	// bench-clusters
	light     bool     // members without a namespace controller (TESTBED_LIGHT=1)
	endpoints int      // endpoints per source slice
	mode      syncMode // one sync for the clusterset (host) or one per member (per-member)
}

// Results is bench/out/results.json.
type Results struct {
	Date     string `json:"date"`
	Binary   string `json:"binary,omitempty"` // kubectl-mcs version of the binary measured
	Machine  string `json:"machine"`
	Services int    `json:"services"`
	Clusters int    `json:"clusters"`
	Samples  int    `json:"samples"`

	PropagationP50 float64 `json:"propagation_p50_ms"`
	PropagationP99 float64 `json:"propagation_p99_ms"`
	FloorP50       float64 `json:"floor_p50_ms"`
	FloorP99       float64 `json:"floor_p99_ms"`
	// The two-hop floor made of EndpointSlices written as sync writes them (sliceHop), and the
	// same with its second hop in every cluster at once (the fan-out floor).
	SliceFloorP50 float64 `json:"slice_floor_p50_ms,omitempty"`
	SliceFloorP99 float64 `json:"slice_floor_p99_ms,omitempty"`
	// The slice floor with its copy written by server-side apply.
	ApplyFloorP50 float64 `json:"apply_floor_p50_ms,omitempty"`
	FanOutP50     float64 `json:"fan_out_floor_p50_ms,omitempty"`
	FanOutP99     float64 `json:"fan_out_floor_p99_ms,omitempty"`

	ConvergeS float64 `json:"converge_s"`
	// The floor: sync's converge writes replayed by a plain client (replayFloor); the create
	// floor: as many ConfigMap creates (writeFloor).
	ConvergeFloorS       float64 `json:"converge_floor_s"`
	ConvergeCreateFloorS float64 `json:"converge_create_floor_s,omitempty"`
	ConvergeWrites       int     `json:"converge_writes"`
	// Where the CPU went during converge and during the replay floor (which made floor_fraction
	// of the writes).
	ConvergeCPU *CPUUse `json:"converge_cpu,omitempty"`
	ReplayCPU   *CPUUse `json:"replay_cpu,omitempty"`
	// The replay again, watched as sync's converge was (replayFloor): -watched-replay.
	ConvergeWatchedFloorS float64 `json:"converge_watched_floor_s,omitempty"`
	WatchedReplayCPU      *CPUUse `json:"watched_replay_cpu,omitempty"`

	WritesPerChange   float64 `json:"writes_per_change"`
	ImportingClusters int     `json:"importing_clusters"`
	IdleWrites        int     `json:"idle_writes"`
	IdleSeconds       float64 `json:"idle_seconds"`
	PeakRSSMiB        float64 `json:"peak_rss_mib"`

	StatusServices int     `json:"status_services,omitempty"`
	StatusS        float64 `json:"status_s,omitempty"`
	StatusFloorS   float64 `json:"status_floor_s,omitempty"`

	// bench-scale: the client rate limit of sync and of the floors (0: sync's default, 50/100),
	// the machine's load average at the start, the share of the write floor measured.
	QPS           float64 `json:"qps,omitempty"`
	Workers       int     `json:"workers,omitempty"`
	Burst         int     `json:"burst,omitempty"`
	Load          string  `json:"load,omitempty"`
	FloorFraction float64 `json:"floor_fraction,omitempty"`

	BusyRate    float64 `json:"busy_changes_per_s,omitempty"`
	BusySamples int     `json:"busy_samples,omitempty"`
	BusyP50     float64 `json:"busy_p50_ms,omitempty"`
	BusyP99     float64 `json:"busy_p99_ms,omitempty"`
	// BusyLatencies are the samples in the order taken (ms): p99 of a few is their slowest.
	BusyLatencies       []float64 `json:"busy_latencies_ms,omitempty"`
	BusyFloorP50        float64   `json:"busy_floor_p50_ms,omitempty"`
	BusyFloorP99        float64   `json:"busy_floor_p99_ms,omitempty"`
	BusyFanOutP50       float64   `json:"busy_fan_out_floor_p50_ms,omitempty"`
	BusyWritesPerChange float64   `json:"busy_writes_per_change,omitempty"`
	BusyWritesPerS      float64   `json:"busy_writes_per_s,omitempty"`
	BusyError           string    `json:"busy_error,omitempty"`
	// What a plain client carrying the same churn achieved (busyFloor).
	BusyBed *bedCapacity `json:"busy_bed,omitempty"`

	CachedEndpoints   int     `json:"cached_endpoints,omitempty"`
	RSSPerEndpointKiB float64 `json:"rss_per_endpoint_kib,omitempty"`
	// The peak RSS of bare client-go informers over the same objects (informerFloor).
	InformerFloorRSSMiB float64 `json:"informer_floor_rss_mib,omitempty"`
	// The memory request and limit of the Deployment sync --print-manifests generates for the
	// clusterset, against which the peak RSS is judged.
	DeploymentMemoryRequestMiB float64 `json:"deployment_memory_request_mib,omitempty"`
	DeploymentMemoryLimitMiB   float64 `json:"deployment_memory_limit_mib,omitempty"`

	// bench-clusters: light members, endpoints per source slice, sync's CPU seconds over the idle
	// propagation samples, and what the members' own processes used.
	Light               bool    `json:"light,omitempty"`
	EndpointsPerSlice   int     `json:"endpoints_per_slice,omitempty"`
	PropagationSyncCPUS float64 `json:"propagation_sync_cpu_s,omitempty"`
	Bed                 *BedUse `json:"bed,omitempty"`
	// Per-member mode (-mode per-member; empty: host): one sync --local per member. Measured is
	// the member whose sync peak_rss_mib, propagation_sync_cpu_s and converge_cpu's "sync" are;
	// the other syncs' CPU is converge_cpu's "sync, other members". The sums over every sync (in
	// host mode, its one): their peak RSS each, summed, and their CPU during the idle samples.
	Mode                 string  `json:"mode,omitempty"`
	Measured             string  `json:"measured,omitempty"`
	SyncsPeakRSSMiB      float64 `json:"syncs_peak_rss_mib,omitempty"`
	PropagationSyncsCPUS float64 `json:"propagation_syncs_cpu_s,omitempty"`

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
	flag.StringVar(&c.out, "out", outDir+"/results.json", "results file")
	flag.StringVar(&c.markdown, "markdown", "BENCHMARKS.md", "file whose generated section is rewritten (empty: none)")
	flag.BoolVar(&c.scale, "scale", false, "bench-scale: also count the endpoints sync caches")
	flag.Float64Var(&c.qps, "kube-api-qps", 0, "sync's --kube-api-qps, and the floors' client's (0: sync's default)")
	flag.IntVar(&c.burst, "kube-api-burst", 0, "sync's --kube-api-burst, with -kube-api-qps")
	flag.IntVar(&c.workers, "workers", 16, "sync's --workers (its default), and the write floor's requests in flight per cluster")
	flag.IntVar(&c.busyRate, "busy-rate", 0, "also sample propagation while this many other services change per second (0: no)")
	flag.Float64Var(&c.floorFraction, "floor-fraction", 1, "share of the converge writes the write floor makes, its time scaled up")
	flag.StringVar(&c.profileDir, "profile-dir", "", "run sync with --profiling and save CPU (first 30 s of converge) and heap profiles here")
	flag.BoolVar(&c.watchedReplay, "watched-replay", false, "replay the converge writes a second time, watched by informers of the kinds sync and the bench watched converge with")
	flag.BoolVar(&c.light, "light", false, "the members run no controller-manager (TESTBED_LIGHT=1): the bench empties and finalizes the namespaces it deletes")
	flag.IntVar(&c.endpoints, "endpoints", envInt("BENCH_ENDPOINTS", 2), "endpoints per source slice (BENCH_ENDPOINTS)")
	mode := flag.String("mode", string(modeHost), "host: one sync --watch for the whole clusterset; per-member: one sync --watch --local=MEMBER per member, the first of -contexts the one whose RSS and CPU are measured, writes and idle writes summed over all")
	floorChild := flag.Bool(informerFloorFlag, false, "internal: hold informers of -contexts and print the peak RSS (the memory floor)")
	firstPacket := flag.Bool("first-packet", false, "time to first packet on a real-node bed (the first two -contexts: provider, consumer) instead")
	image := flag.String("image", "", "with -first-packet: the test bed's toolbox image (node.sh env)")
	dnsServer := flag.String("dns-server", "127.0.0.1:5353", "with -first-packet: where each node's kubectl mcs dns-server answers")
	karmadaMode := flag.Bool("karmada", false, "sync --watch against Karmada's MultiClusterService controllers on a --karmada test bed (contexts member1, member2, karmada) instead")
	karmadaSizes := flag.String("karmada-sizes", envOr("BENCH_KARMADA_SIZES", "100,1000"), "with -karmada: services on each path, one run per size (BENCH_KARMADA_SIZES)")
	karmadaRender := flag.String("karmada-render", "", "with -karmada: only draw the CDF and rewrite the section of -markdown from this karmada.json")
	churnRate := flag.Int("karmada-churn", envInt("BENCH_KARMADA_CHURN", 10), "with -karmada: provider-slice changes a second on each path under churn (BENCH_KARMADA_CHURN)")
	curve := flag.String("curve", "", "render the bench-scale section of -markdown from these results files (comma-separated) and exit")
	clustersCurve := flag.String("clusters-curve", "", "render the bench-clusters section of -markdown and its plot -svg from these results files (comma-separated) and exit")
	svg := flag.String("svg", clustersSVG, "with -clusters-curve: where the plot goes")
	dnsMode := flag.Bool("dns", false, "kubectl mcs dns-server under load beside CoreDNS, on the first of -contexts, instead")
	dc := dnsConfig{}
	flag.IntVar(&dc.imports, "dns-imports", envInt("BENCH_DNS_IMPORTS", 1000), "with -dns: ClusterSetIP imports (BENCH_DNS_IMPORTS)")
	flag.IntVar(&dc.endpoints, "dns-endpoints", envInt("BENCH_DNS_ENDPOINTS", 5000), "with -dns: endpoints of the Headless import (BENCH_DNS_ENDPOINTS)")
	flag.IntVar(&dc.workers, "dns-workers", 4, "with -dns: concurrent clients, each waiting for its answer")
	flag.IntVar(&dc.rounds, "dns-rounds", 3, "with -dns: rounds, each loading every configuration on both servers")
	flag.DurationVar(&dc.duration, "dns-duration", 5*time.Second, "with -dns: each server's load per configuration and round")
	flag.Parse()
	if *dnsMode {
		c.contexts = strings.Split(*contexts, ",")[:1]
		if err := benchDNS(context.Background(), c, dc); err != nil {
			fail(err)
		}
		return
	}
	if *floorChild {
		if err := holdInformers(c.kubeconfig, strings.Split(*contexts, ",")); err != nil {
			fail(err)
		}
		return
	}
	if *curve != "" {
		if err := renderCurve(strings.Split(*curve, ","), c.markdown); err != nil {
			fail(err)
		}
		return
	}
	if *clustersCurve != "" {
		if err := renderClusters(strings.Split(*clustersCurve, ","), c.markdown, *svg); err != nil {
			fail(err)
		}
		return
	}
	if *karmadaMode {
		if err := benchKarmada(c, *karmadaSizes, *churnRate, *karmadaRender); err != nil {
			fail(err)
		}
		return
	}
	if *firstPacket {
		c.contexts = strings.Split(*contexts, ",")
		c.samples = envInt("BENCH_PACKET_SAMPLES", 10)
		if len(c.contexts) < 2 || *image == "" {
			fail(fmt.Errorf("-first-packet: need two -contexts and -image"))
		}
		table, err := runFirstPacket(context.Background(), c, *image, *dnsServer)
		if err != nil {
			fail(err)
		}
		fmt.Println(table)
		if c.markdown != "" {
			if err := rewriteSection(c.markdown, packetBeginMark, packetEndMark, table); err != nil {
				fail(err)
			}
		}
		return
	}
	if c.qps > 0 && c.burst <= 0 {
		c.burst = int(2 * c.qps)
	}
	c.contexts = strings.Split(*contexts, ",")
	endpointsPerSlice = max(c.endpoints, 1)
	var err error
	if c.mode, err = parseMode(*mode); err != nil {
		fail(err)
	}
	if len(c.contexts) < 3 {
		fail(fmt.Errorf("--contexts: need at least three clusters"))
	}
	res, err := run(context.Background(), c)
	if err != nil {
		fail(err)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(c.out, append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
	table := markdownTable(res)
	fmt.Println(table)
	if c.markdown != "" {
		if err := rewriteSection(c.markdown, beginMark, endMark, table); err != nil {
			fail(err)
		}
	}
}

// outDir holds what a run writes besides BENCHMARKS.md: the results, sync's log and metrics
// scrapes (bench-scale: its results files and profiles, in scale/). Paths are relative to the
// repository root, where make runs the bench.
const outDir = "bench/out"

// syncLog is the log of the sync process under test.
const syncLog = outDir + "/sync.log"

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
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
