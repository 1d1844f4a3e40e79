package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The measured operations of a propagation sample and their floors.

// writeFloor makes the same number of writes per cluster as the cold start needed, with a client
// configured like kubectl-mcs's (same QPS and burst) and as many in flight per cluster as sync
// has workers (each of which writes to one cluster at a time). With
// floorFraction < 1 it makes that share of them and scales the time up: a plain client's creates
// go at a steady rate, and at tens of thousands of services the full floor takes as long again
// as the converge it measures.
func (b *bench) writeFloor(ctx context.Context, perCluster map[string]int) (float64, error) {
	frac := b.floorFraction
	if frac <= 0 || frac > 1 {
		frac = 1
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(b.members))
	for mi, m := range b.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[mi] = parallel(max(b.workers, 1), int(float64(perCluster[m.name])*frac+0.5), func(i int) error {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "floor-" + strconv.Itoa(i)}, Data: map[string]string{"i": strconv.Itoa(i)}}
				_, err := m.same.CoreV1().ConfigMaps(floorNS).Create(ctx, cm, metav1.CreateOptions{})
				return err
			})
		}()
	}
	wg.Wait()
	return time.Since(t0).Seconds() / frac, errors.Join(errs...)
}

// propagate changes one endpoint of a source slice in the first exporter and returns the time
// until the last cluster's watch shows the new address in the MCS slice there.
func (b *bench) propagate(ctx context.Context, j int, target *seer) (float64, error) {
	name := svcName(j % b.services)
	src := b.sources[name].DeepCopy()
	ip := fmt.Sprintf("10.250.%d.%d", j/250, j%250+1)
	src.Endpoints[0].Addresses = []string{ip}
	ch := target.await(ip)
	t0 := time.Now()
	updated, err := b.exporters[0].fast.DiscoveryV1().EndpointSlices(ns).Update(ctx, src, metav1.UpdateOptions{})
	if err != nil {
		return 0, fmt.Errorf("%s: updating slice %s: %w", b.exporters[0].name, src.Name, err)
	}
	b.sources[name] = updated
	t1, err := await(ch, fmt.Sprintf("%s: address %s of %s", b.members[len(b.members)-1].name, ip, name))
	return float64(t1.Sub(t0).Microseconds()) / 1000, err
}

// hop is the floor of propagate: a plain client writes in the first cluster, sees it by watch,
// writes in the last cluster and sees that by watch; no engine in between.
func (b *bench) hop(ctx context.Context, j int, seers map[string]*seer) (float64, error) {
	a, z := b.members[0], b.members[len(b.members)-1]
	token := "t" + strconv.Itoa(j)
	chA, chZ := seers[a.name+"/floor"].await(token), seers[z.name+"/floor"].await(token)
	write := func(m *member) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hop"}, Data: map[string]string{"token": token}}
		_, err := m.same.CoreV1().ConfigMaps(floorNS).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	t0 := time.Now()
	if err := write(a); err != nil {
		return 0, err
	}
	if _, err := await(chA, a.name+": floor token"); err != nil {
		return 0, err
	}
	if err := write(z); err != nil {
		return 0, err
	}
	t1, err := await(chZ, z.name+": floor token")
	return float64(t1.Sub(t0).Microseconds()) / 1000, err
}

// sliceHop is hop made of the writes sync makes: the address goes into an EndpointSlice in the
// first cluster, then, once seen there, into a copy in the last cluster (a merge patch of the
// fields sync owns, as sync writes its copies), until the last cluster's watch shows it. With every, the
// copy is written in every cluster at once (the fan-out floor), as sync must: every member
// imports, the first cluster too. Between them and hop, what the kind of object and the fan-out cost apiservers that
// share the machine's cores.
// With apply, the copy is written by a forced server-side apply of the same fields instead, as
// sync wrote it before: what the merge patch saves.
func (b *bench) sliceHop(ctx context.Context, j int, seers map[string]*seer, every, apply bool) (float64, error) {
	a, z := b.members[0], b.members[len(b.members)-1]
	second := []*member{z}
	ip := fmt.Sprintf("10.253.%d.%d", j/250%250, j%250+1)
	pt, opts := types.MergePatchType, metav1.PatchOptions{FieldManager: "kubectl-mcs-bench"}
	switch {
	case every:
		second, ip = b.members, fmt.Sprintf("10.252.%d.%d", j/250%250, j%250+1)
	case apply:
		ip, pt, opts.Force = fmt.Sprintf("10.251.%d.%d", j/250%250, j%250+1), types.ApplyPatchType, new(true)
	}
	chA, chZ := seers[a.name+"/floor-slices"].await(ip), seers[z.name+"/floor-slices"].await(ip)
	body := fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"hop-copy","labels":{%q:"kubectl-mcs"}},`+
		`"addressType":"IPv4","endpoints":[{"addresses":[%q],"conditions":{"ready":true}}]}`, discoveryv1.LabelManagedBy, ip)
	write := func(m *member) error {
		_, err := m.same.DiscoveryV1().EndpointSlices(floorNS).Patch(ctx, "hop-copy", pt, []byte(body), opts)
		return err
	}
	// The first hop is the provider's change, an update as propagate makes it.
	ready := true
	src := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hop", Labels: map[string]string{discoveryv1.LabelManagedBy: "kubectl-mcs"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
	t0 := time.Now()
	if _, err := a.same.DiscoveryV1().EndpointSlices(floorNS).Update(ctx, src, metav1.UpdateOptions{FieldManager: "kubectl-mcs-bench"}); err != nil {
		return 0, err
	}
	if _, err := await(chA, a.name+": floor address "+ip); err != nil {
		return 0, err
	}
	if err := parallel(len(second), len(second), func(i int) error { return write(second[i]) }); err != nil {
		return 0, err
	}
	t1, err := await(chZ, z.name+": floor address "+ip)
	return float64(t1.Sub(t0).Microseconds()) / 1000, err
}
