package main

// bench -karmada: the same change carried from a provider to a consumer by `kubectl mcs sync
// --watch` and by Karmada's own MultiClusterService controllers, on one test bed (member1 and
// member2 joined to a real Karmada control plane, test/testbed/karmada.sh), with the plain
// two-hop floor interleaved. See BENCHMARKS.md, "Against Karmada".

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

const (
	// karmadaNS holds the Karmada path's Services and MultiClusterServices on the control plane,
	// and (placed there by Karmada) in the members; the sync path keeps ns, the floor floorNS.
	karmadaNS = "mcs-bench-karmada"
	// Karmada's dispatch controller labels the slices it writes in a consumer with this
	// managed-by, and names them PROVIDER-SOURCENAME.
	karmadaDispatchManager = "endpointslice-dispatch-controller.karmada.io"
)

type karmadaConfig struct {
	sizes     []int         // services on each path, grown from one size to the next
	churnRate int           // provider-slice changes a second on each path's other services
	window    time.Duration // no sample is started after this much of a phase
	svg       string
}

// KarmadaResults is bench/out/karmada.json.
type KarmadaResults struct {
	Date      string       `json:"date"`
	Binary    string       `json:"binary,omitempty"`
	Machine   string       `json:"machine"`
	Load      string       `json:"load,omitempty"`
	Samples   int          `json:"samples"`
	ChurnRate int          `json:"churn_changes_per_s_per_path"`
	Runs      []KarmadaRun `json:"runs"`
	Error     string       `json:"error,omitempty"`
}

// KarmadaRun is one size under one load: the samples of the three paths, interleaved.
type KarmadaRun struct {
	Services int     `json:"services"`
	Churn    bool    `json:"churn"`
	Achieved float64 `json:"churn_achieved_per_s_per_path,omitempty"`
	Sync     Latency `json:"sync"`
	Karmada  Latency `json:"karmada"`
	Floor    Latency `json:"floor"`
	// The deepest Karmada's endpointslice-collect queue was, read after every sample (-1: not
	// read): how far its controllers were behind.
	CollectQueue float64 `json:"karmada_collect_queue_max"`
}

// Latency is the distribution of one path's samples, in ms.
type Latency struct {
	P50     float64   `json:"p50_ms"`
	P99     float64   `json:"p99_ms"`
	Max     float64   `json:"max_ms"`
	Samples []float64 `json:"samples_ms"`
}

func latency(xs []float64) Latency {
	l := Latency{P50: percentile(xs, 50), P99: percentile(xs, 99), Samples: xs}
	for _, x := range xs {
		l.Max = max(l.Max, x)
	}
	return l
}

type karmadaBench struct {
	*bench
	karmadaConfig
	cp, provider, consumer *member
	// The Karmada path's source slices in the provider, by service (the sync path's are
	// bench.sources).
	karmadaSources map[string]*discoveryv1.EndpointSlice
	// The consumer's watches: sync's copies, Karmada's dispatched slices; the floor's ConfigMaps.
	syncSeen, karmadaSeen *seer
	floor                 map[string]*seer
	karmadaMetrics        string // karmada-controller-manager's metrics URL ("": unknown)
	taken                 int    // samples so far: each gets addresses and a token of its own
	churned               int    // churn changes asked so far: each writes an address of its own
}

// benchKarmada is bench -karmada: -samples (BENCH_KARMADA_SAMPLES here) triples per size and
// load, results into bench/out/karmada.json, the CDF into bench/out/karmada-cdf.svg and the
// table into -markdown. With render, only the picture and the table, from that results file.
func benchKarmada(c config, sizes string, churn int, render string) error {
	kc := karmadaConfig{churnRate: max(churn, 1), window: 10 * time.Minute, svg: outDir + "/karmada-cdf.svg"}
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return fmt.Errorf("-karmada-sizes: %q is not a number of services (at least 2)", f)
		}
		if len(kc.sizes) > 0 && n <= kc.sizes[len(kc.sizes)-1] {
			return fmt.Errorf("-karmada-sizes: sizes must grow (%s)", sizes)
		}
		kc.sizes = append(kc.sizes, n)
	}
	if render != "" {
		res := &KarmadaResults{}
		data, err := os.ReadFile(render)
		if err == nil {
			err = json.Unmarshal(data, res)
		}
		if err != nil {
			return err
		}
		fmt.Println(karmadaTable(res))
		return writeResults(res, kc.svg, render, c.markdown)
	}
	c.samples = envInt("BENCH_KARMADA_SAMPLES", 100)
	c.contexts = []string{"member1", "member2", "karmada"}
	if c.out == outDir+"/results.json" {
		c.out = outDir + "/karmada.json"
	}
	// Written after every run, so that a size that never finishes leaves the smaller ones.
	save := func(res *KarmadaResults) error { return writeResults(res, kc.svg, c.out, c.markdown) }
	// Stopped (make's Ctrl-C, a kill): the rows so far are saved, with the reason.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runKarmada(ctx, c, kc, save)
	if err != nil {
		return err
	}
	if err := save(res); err != nil {
		return err
	}
	fmt.Println(karmadaTable(res))
	if res.Error != "" {
		return fmt.Errorf("%s (figures so far in %s)", res.Error, c.out)
	}
	return nil
}

func runKarmada(ctx context.Context, c config, kc karmadaConfig, save func(*KarmadaResults) error) (*KarmadaResults, error) {
	res := &KarmadaResults{Date: time.Now().UTC().Format(time.RFC3339), Binary: binaryVersion(c.binary), Machine: machine(),
		Load: loadAvg(), Samples: c.samples, ChurnRate: kc.churnRate}
	b := &bench{config: c, sources: map[string]*discoveryv1.EndpointSlice{}}
	if err := b.connect(); err != nil {
		return nil, err
	}
	k := &karmadaBench{bench: b, karmadaConfig: kc, karmadaSources: map[string]*discoveryv1.EndpointSlice{}}
	k.provider, k.consumer, k.cp = b.members[0], b.members[1], b.members[2]
	b.members, b.exporters, b.contexts = b.members[:2], b.members[:1], b.contexts[:2]
	v, err := mcsapi.ServedVersion(k.provider.fast.Discovery())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.provider.name, err)
	}
	b.exportVersion = v
	k.karmadaMetrics = controllerManagerMetrics(os.Getenv("TESTBED_DIR"))

	logf("init, fresh namespaces: %s and %s in %s and %s, %s on the control plane", ns, floorNS, k.provider.name, k.consumer.name, karmadaNS)
	if out, err := exec.Command(c.binary, "--kubeconfig", c.kubeconfig, "init", "--contexts", strings.Join(b.contexts, ",")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl mcs init: %v: %s", err, out)
	}
	if err := b.namespaces(ctx); err != nil {
		return nil, err
	}
	if err := k.karmadaNamespace(ctx); err != nil {
		return nil, err
	}
	if err := k.watch(ctx); err != nil {
		return nil, err
	}
	if err := b.startSyncs(); err != nil {
		return nil, err
	}
	defer b.stopSyncs()

	from := 0
	for _, n := range kc.sizes {
		t0 := time.Now()
		logf("%d services on each path (ServiceExports in %s for sync, MultiClusterServices on the control plane for Karmada)", n, k.provider.name)
		if err := k.grow(ctx, from, n); err != nil {
			res.Error = fmt.Sprintf("%d services: %s", n, firstLine(err))
			logf("%s", res.Error)
			return res, nil
		}
		from = n
		logf("both paths hold %d services after %.0f s", n, time.Since(t0).Seconds())
		for _, churn := range []bool{false, true} {
			run, err := k.phase(ctx, n, churn)
			if err != nil {
				res.Error = fmt.Sprintf("%d services, %s: %s", n, loadName(churn), firstLine(err))
				logf("%s", res.Error)
				return res, nil
			}
			res.Runs = append(res.Runs, run)
			if err := save(res); err != nil {
				return nil, err
			}
			logf("%d services, %s: sync p50 %.1f ms, Karmada %.1f ms, floor %.1f ms", n, loadName(churn), run.Sync.P50, run.Karmada.P50, run.Floor.P50)
		}
	}
	return res, nil
}

// firstLine keeps a joined error short: its first error, and how many more there were.
func firstLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more)", lines[0], len(lines)-1)
}

func loadName(churn bool) string {
	if churn {
		return "churn"
	}
	return "idle"
}

// phase takes c.samples triples (sync, Karmada, floor), each on a service of the first half,
// while the second half stays still or, with churn, changes at churnRate a second on each path.
func (k *karmadaBench) phase(ctx context.Context, services int, churn bool) (KarmadaRun, error) {
	run := KarmadaRun{Services: services, Churn: churn, CollectQueue: -1}
	pool := max(1, services/2)
	var stop func() (float64, error)
	if churn {
		stop = k.startChurn(ctx, pool, services)
		time.Sleep(5 * time.Second) // the queues reach their steady state first
		awaitTimeout = 3 * time.Minute
		defer func() { awaitTimeout = 30 * time.Second }()
	}
	logf("%d services, %s: %d samples of each path", services, loadName(churn), k.samples)
	var s, kd, f []float64
	t0 := time.Now()
	var err error
	for j := 0; j < k.samples && time.Since(t0) < k.window; j++ {
		var d float64
		if d, err = k.sample(ctx, k.bench.sources, ns, k.syncSeen, j%pool, "10.250"); err != nil {
			break
		}
		s = append(s, d)
		if d, err = k.sample(ctx, k.karmadaSources, karmadaNS, k.karmadaSeen, j%pool, "10.249"); err != nil {
			break
		}
		kd = append(kd, d)
		if d, err = k.hop(ctx, k.taken, k.floor); err != nil {
			break
		}
		f = append(f, d)
		k.taken++
		if q, ok := k.collectQueue(); ok {
			run.CollectQueue = max(run.CollectQueue, q)
		}
	}
	if stop != nil {
		achieved, cerr := stop()
		run.Achieved = achieved
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		return run, err
	}
	if len(s) < k.samples {
		logf("only %d samples within %v", len(s), k.window)
	}
	run.Sync, run.Karmada, run.Floor = latency(s), latency(kd), latency(f)
	return run, k.drain(ctx)
}

func writeResults(res *KarmadaResults, svg, out, markdown string) error {
	if err := writeJSON(out, res); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(svg), 0o755); err != nil {
		return err
	}
	f, err := os.Create(svg)
	if err != nil {
		return err
	}
	if err := writeCDF(f, "Provider slice change → consumer's watch: kubectl mcs sync, Karmada, two-hop floor", cdfPanels(res)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if markdown == "" {
		return nil
	}
	return rewriteSection(markdown, karmadaBeginMark, karmadaEndMark, karmadaTable(res))
}

// controllerManagerMetrics is where karmada.sh serves karmada-controller-manager's metrics in the
// test bed dir (its ports file), or "".
func controllerManagerMetrics(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "karmada-cp", "ports"))
	if dir == "" || err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "cm-metrics="); ok {
			return "http://127.0.0.1:" + strings.TrimSpace(p) + "/metrics"
		}
	}
	return ""
}

// collectQueue is the depth of Karmada's endpointslice-collect queue (every priority).
func (k *karmadaBench) collectQueue() (float64, bool) {
	if k.karmadaMetrics == "" {
		return 0, false
	}
	v, found, err := promtext.Scrape(k.karmadaMetrics, "workqueue_depth", `name="endpointslice-collect"`)
	return v, found && err == nil
}
