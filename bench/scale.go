package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/pager"
)

// What `make bench-scale` adds to a run of `make bench`: a raised client rate limit, propagation
// measured again while other services change, the endpoints sync caches, and pprof profiles.

// convergePolling is how often, and how long, the cold start is checked: each check lists every
// import, export and slice the bench watches (services x clusters).
func convergePolling(services, clusters int) (every, limit time.Duration) {
	every = time.Duration(services*clusters/50) * time.Millisecond
	every = min(max(every, 20*time.Millisecond), time.Second)
	// A bound only: on a busy 2-core machine 5 clusters took 200 ms per service and cluster.
	limit = 10*time.Minute + time.Duration(services*clusters)*400*time.Millisecond
	return every, limit
}

// propagationSamples are the propagation samples and, taken right after each, its floors: the
// two-hop floor (ConfigMaps), the slice floor (the same two hops as EndpointSlices written as
// sync writes them), the apply floor (the slice floor's copy by server-side apply) and the
// fan-out floor (the slice floor's copy in every cluster).
type propagationSamples struct {
	lat, floor, sliceFloor, applyFloor, fanOut []float64
}

// samplePropagation takes n propagation samples starting at sample `from` (each its own service
// and address), each followed by a sample of every floor, so all see the same machine; none is
// started after `until` (zero: no limit).
func (b *bench) samplePropagation(ctx context.Context, from, n int, until time.Time, watchers map[string]*seer) (*propagationSamples, error) {
	target := watchers[b.members[len(b.members)-1].name]
	out := &propagationSamples{}
	for j := from; j < from+n && (until.IsZero() || time.Now().Before(until)); j++ {
		settle()
		start := time.Now()
		d, err := b.propagate(ctx, j, target)
		if err != nil {
			return nil, err
		}
		if d > slowSample {
			// To find in sync's log (its lines carry the time of each write) what held it up.
			logf("sample %d (%s) took %.0f ms from %s", j, svcName(j%b.services), d, start.UTC().Format("15:04:05.000"))
		}
		out.lat = append(out.lat, d)
		for _, f := range []struct {
			into *[]float64
			take func() (float64, error)
		}{
			{&out.floor, func() (float64, error) { return b.hop(ctx, j, watchers) }},
			{&out.sliceFloor, func() (float64, error) { return b.sliceHop(ctx, j, watchers, false, false) }},
			{&out.applyFloor, func() (float64, error) { return b.sliceHop(ctx, j, watchers, false, true) }},
			{&out.fanOut, func() (float64, error) { return b.sliceHop(ctx, j, watchers, true, false) }},
		} {
			settle()
			if d, err = f.take(); err != nil {
				return nil, err
			}
			*f.into = append(*f.into, d)
		}
	}
	return out, nil
}

// settle lets the writes that follow a sample (sync's copies in the other clusters, the status
// of the export) end before the next one starts, so that no sample pays for the one before.
func settle() { time.Sleep(50 * time.Millisecond) }

// slowSample is the latency, in ms, past which a sample is logged with its service and start.
const slowSample = 5000

// busySamples: a quarter of the idle ones (at least 10), started within busyWindow. When the
// clusterset cannot absorb busyRate changes a second, each sample waits behind a growing queue,
// and the window keeps the phase from growing without bound.
func (b *bench) busySamples() int { return max(10, b.samples/4) }

const busyWindow = time.Minute

// busyPhase repeats the propagation samples (on services of their own) while a churner changes
// one endpoint of another service's source slice in the second exporter busyRate times a second.
// The writes sync made meanwhile, per second, say whether it kept up.
func (b *bench) busyPhase(ctx context.Context, res *Results, watchers map[string]*seer) error {
	first := 2 * b.samples // services 0..2*samples-1 are the samples'
	if b.services-first < b.busyRate {
		return fmt.Errorf("-busy-rate %d needs at least %d services", b.busyRate, first+b.busyRate)
	}
	logf("%d propagation samples while %d other services change per second", b.samples, b.busyRate)
	before, err := b.quiet(ctx)
	if err != nil {
		return err
	}
	cctx, stop := context.WithCancel(ctx)
	var changes, failed atomic.Int64
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		b.churn(cctx, first, &changes, &failed)
	}()
	// Where sync's time goes under churn: a CPU profile of the first 30 s.
	go b.saveProfile("busy-profile", "profile", 30)
	awaitTimeout = 5 * time.Minute
	ps, err := b.samplePropagation(ctx, b.samples, b.busySamples(), t0.Add(busyWindow), watchers)
	awaitTimeout = 30 * time.Second
	stop()
	<-done
	elapsed := time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	during, err := b.writes()
	if err != nil {
		return err
	}
	b.saveMetrics(outDir + "/metrics-busy.log")
	res.BusyWritesPerS = float64(during-before) / elapsed
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("churn: %d of its changes failed", n)
	}
	after, err := b.quiet(ctx)
	if err != nil {
		return err
	}
	res.BusyRate = float64(changes.Load()) / elapsed
	res.BusyP50, res.BusyP99 = percentile(ps.lat, 50), percentile(ps.lat, 99)
	res.BusyFloorP50, res.BusyFloorP99 = percentile(ps.floor, 50), percentile(ps.floor, 99)
	res.BusyFanOutP50 = percentile(ps.fanOut, 50)
	res.BusySamples = len(ps.lat)
	res.BusyLatencies = ps.lat
	res.BusyWritesPerChange = float64(after-before) / float64(changes.Load()+int64(len(ps.lat)))
	logf("busy: p50 %.1f ms (floor %.1f), %.0f changes/s, sync wrote %.0f/s, %.2f writes per change", res.BusyP50, res.BusyFloorP50, res.BusyRate, res.BusyWritesPerS, res.BusyWritesPerChange)
	logf("busy floor: a plain client carrying the same churn for %v, sync idle", busyWindow)
	bed, err := b.busyFloor(ctx, busyWindow)
	if err != nil {
		return err
	}
	res.BusyBed = bed
	logf("busy floor: %.0f changes/s carried (%d dropped), %.0f writes/s; change to last copy p50 %.1f ms, p99 %.1f ms",
		bed.ChangesPerS, bed.Dropped, bed.WritesPerS, bed.LagP50, bed.LagP99)
	return nil
}

// churn patches the source slices of services first.. in the second exporter, busyRate a second,
// round robin, until ctx ends. A merge patch replaces the endpoint list whole, so no read first.
func (b *bench) churn(ctx context.Context, first int, changes, failed *atomic.Int64) {
	m := b.exporters[1]
	paced(ctx, b.busyRate, 8, 0, 0, func(n int) {
		i := first + n%(b.services-first)
		eps := make([]string, endpointsPerSlice)
		for k := range eps {
			a := address(1, i, k)
			if k == 0 {
				a = fmt.Sprintf("10.251.%d.%d", n/250%250, n%250+1)
			}
			eps[k] = fmt.Sprintf(`{"addresses":[%q],"conditions":{"ready":true}}`, a)
		}
		body := `{"endpoints":[` + strings.Join(eps, ",") + `]}`
		_, err := m.fast.DiscoveryV1().EndpointSlices(ns).Patch(ctx, svcName(i)+"-src", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		switch {
		case err == nil:
			changes.Add(1)
		case ctx.Err() == nil:
			failed.Add(1)
		}
	})
}

// cachedEndpoints counts the endpoints of every EndpointSlice in the namespace in every cluster:
// the sources and the slices sync writes, all of which its informers hold.
func (b *bench) cachedEndpoints(ctx context.Context) (int, error) {
	total := 0
	for _, m := range b.members {
		p := pager.New(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return m.fast.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
		})
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
			total += len(o.(*discoveryv1.EndpointSlice).Endpoints)
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("%s: counting endpoints: %w", m.name, err)
		}
	}
	return total, nil
}

// profileConverge takes a CPU profile of the first 30 s of the cold start, in the background,
// once the process serves.
func (b *bench) profileConverge(ctx context.Context) {
	if b.profileDir == "" {
		return
	}
	go func() {
		_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			_, err := b.writes()
			return err == nil, nil
		})
		b.saveProfile("profile", "profile", 30)
	}()
}

// saveProfile fetches one pprof profile of the sync process into profileDir, as
// SERVICES-cCLUSTERS[-eENDPOINTS]-LABEL.pprof (ENDPOINTS per slice when not 2), one per run.
func (b *bench) saveProfile(label, kind string, seconds int) {
	if b.profileDir == "" {
		return
	}
	url := strings.TrimSuffix(b.measured().metrics, "/metrics") + "/debug/pprof/" + kind
	if seconds > 0 {
		url += fmt.Sprintf("?seconds=%d", seconds)
	}
	resp, err := http.Get(url)
	if err != nil {
		logf("profile %s: %v", kind, err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	name := fmt.Sprintf("%d-c%d", b.services, len(b.members))
	if endpointsPerSlice != 2 {
		name += fmt.Sprintf("-e%d", endpointsPerSlice)
	}
	path := filepath.Join(b.profileDir, name+"-"+label+".pprof")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		logf("profile %s: %v", kind, err)
	}
}

// loadAvg is the machine's 1-minute load average at the start, for the record.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// readResults loads every results file of a bench-scale run.
func readResults(paths []string) ([]*Results, error) {
	var out []*Results
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		r := &Results{}
		if err := json.Unmarshal(data, r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}
