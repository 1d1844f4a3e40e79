package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What the bed itself can carry under the busy phase's churn, with no engine: a plain client
// makes each change (a patch of a source slice in the second exporter, as the churner does) and
// at once writes its copy into every cluster (a merge patch, as sync writes its copies),
// busyRate changes a second, in a namespace sync does not watch, while sync idles. If the bed
// cannot take that many writes, no controller can carry every change of the churn: the figures
// say how many it took.

// bedCapacity is the outcome of the busy floor.
type bedCapacity struct {
	ChangesPerS float64 `json:"changes_per_s"` // changes made, each with its copies written
	WritesPerS  float64 `json:"writes_per_s"`  // the copies' writes
	LagP50      float64 `json:"lag_p50_ms"`    // from a change's start to its last copy written
	LagP99      float64 `json:"lag_p99_ms"`
	Dropped     int     `json:"dropped"` // ticks skipped because every writer was still busy
}

// busyFloorWriters is the plain client's changes in flight: enough that the client is never
// what limits it (each waits on its cluster writes).
const busyFloorWriters = 64

func (b *bench) busyFloor(ctx context.Context, window time.Duration) (*bedCapacity, error) {
	src, names := b.exporters[1], max(b.services-2*b.samples, 1) // as many as the churner cycles through
	// The slices are made by apply, then changed as the churner changes a source and as sync
	// writes its copies: by merge patch.
	patch, opts := types.ApplyPatchType, metav1.PatchOptions{FieldManager: "kubectl-mcs-bench", Force: new(true)}
	change := func(n int) error {
		name := fmt.Sprintf("churn-%d", n%names)
		ip := fmt.Sprintf("10.253.%d.%d", n/250%250, n%250+1)
		apply := func(m *member, slice string) error {
			body := fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":%q,"labels":{%q:"kubectl-mcs-bench"}},`+
				`"addressType":"IPv4","endpoints":[{"addresses":[%q],"conditions":{"ready":true}}]}`, slice, discoveryv1.LabelManagedBy, ip)
			_, err := m.fast.DiscoveryV1().EndpointSlices(floorNS).Patch(ctx, slice, patch, []byte(body), opts)
			return err
		}
		if err := apply(src, name+"-src"); err != nil {
			return err
		}
		return parallel(len(b.members), len(b.members), func(i int) error { return apply(b.members[i], name) })
	}
	// The slices exist before the clock starts, as the churned ones and their copies do.
	if err := parallel(busyFloorWriters, names, change); err != nil {
		return nil, fmt.Errorf("busy floor: creating its slices: %s", firstLine(err))
	}
	patch, opts = types.MergePatchType, metav1.PatchOptions{FieldManager: "kubectl-mcs-bench"}

	var mu sync.Mutex
	var lags []float64
	var changes, failed atomic.Int64
	var firstErr atomic.Value
	t0 := time.Now()
	dropped, _ := paced(ctx, b.busyRate, busyFloorWriters, 0, window, func(n int) {
		t := time.Now()
		if err := change(n); err != nil {
			if ctx.Err() == nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
			return
		}
		changes.Add(1)
		mu.Lock()
		lags = append(lags, float64(time.Since(t).Microseconds())/1000)
		mu.Unlock()
	})
	elapsed := time.Since(t0).Seconds()
	if n := failed.Load(); n > 0 {
		return nil, fmt.Errorf("busy floor: %d changes failed, the first: %v", n, firstErr.Load())
	}
	return &bedCapacity{
		ChangesPerS: float64(changes.Load()) / elapsed, WritesPerS: float64(changes.Load()*int64(len(b.members))) / elapsed,
		LagP50: percentile(lags, 50), LagP99: percentile(lags, 99), Dropped: dropped,
	}, nil
}
