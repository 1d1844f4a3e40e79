package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// The replay floor of the cold start: the very writes sync made (the same number of each kind
// and verb, per cluster) made again by a plain client configured like sync's (same QPS and burst,
// as many in flight per cluster as sync has workers), into the floor namespace, with objects sync
// wrote as templates. ConfigMap creates (writeFloor) understate what those writes cost the
// apiserver: server-side applies of custom resources, status subresources, cluster IPs allocated.
// What is left between the two is ours: the engine, the dependency order, the informers. The
// replay has a namespace of its own, deleted (and awaited) afterwards, so that what it made
// leaves no trace in the later phases (status -A, diagnose -A).

const replayNS = "mcs-bench-replay"

// replayKinds: the kinds sync writes, by their metric label, and their resources.
var replayKinds = []struct {
	kind string
	gvr  schema.GroupVersionResource
}{
	{"ServiceImport", mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports)},
	{"Service", schema.GroupVersionResource{Version: "v1", Resource: "services"}},
	{"EndpointSlice", schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}},
	{"ServiceExport", mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)},
}

// replayVerbs in the order they are replayed: each needs the objects the ones before made.
var replayVerbs = []string{"create", "ownership", "update", "status"}

// replayCounts reads sync's converge writes by cluster, kind and verb from its metrics; a verb
// the replay does not know is an error, so that the floor never silently makes fewer writes.
func (b *bench) replayCounts() (map[string]map[string]map[string]int, error) {
	out := map[string]map[string]map[string]int{}
	total := 0
	for _, m := range b.members {
		out[m.name] = map[string]map[string]int{}
		for _, k := range replayKinds {
			out[m.name][k.kind] = map[string]int{}
			for _, v := range replayVerbs {
				n, err := b.writes(`cluster="`+m.name+`"`, `kind="`+k.kind+`"`, `verb="`+v+`"`)
				if err != nil {
					return nil, err
				}
				out[m.name][k.kind][v] = n
				total += n
			}
		}
	}
	all, err := b.writes()
	if err != nil {
		return nil, err
	}
	if all != total {
		return nil, fmt.Errorf("replay floor: sync made %d writes, the replay knows %d of them (a kind or verb it does not replay)", all, total)
	}
	return out, nil
}

// replayFloor makes the writes counted (times floorFraction, the time scaled up) in every cluster
// at once and returns the seconds they took, and the CPU the machine spent meanwhile (not scaled).
// watched: while informers of the kinds sync watches, and the bench's own watchers, watch the
// replay namespace as they watched sync's converge, so that the apiservers deliver the same
// events (the watched replay floor, for the explanation).
func (b *bench) replayFloor(ctx context.Context, counts map[string]map[string]map[string]int, syncs map[int]string, watched bool) (float64, *CPUUse, error) {
	frac := b.floorFraction
	if frac <= 0 || frac > 1 {
		frac = 1
	}
	type prepared struct {
		m         *member
		templates map[string]*unstructured.Unstructured
		n         map[string]map[string]int
	}
	var ready []prepared
	// The namespace controller deletes a replay's objects at a few dozen a second: at 10,000
	// services that is more than 15 minutes, and a replay that follows must not meet them.
	cleanup := 15 * time.Minute
	for _, m := range b.members {
		created := 0
		for _, k := range replayKinds {
			created += int(float64(counts[m.name][k.kind]["create"]) * frac)
		}
		cleanup = max(cleanup, time.Duration(created/20)*time.Second)
	}
	for _, m := range b.members {
		if err := freshNamespace(ctx, m, replayNS, cleanup); err != nil {
			return 0, nil, err
		}
	}
	defer func() {
		// In every member at once: one after another took 38 minutes at 10,000 services.
		_ = parallel(len(b.members), len(b.members), func(i int) error {
			if err := deleteNamespace(ctx, b.members[i], replayNS, cleanup); err != nil {
				logf("replay floor: %v", err)
			}
			return nil
		})
	}()
	for _, m := range b.members {
		p := prepared{m: m, templates: map[string]*unstructured.Unstructured{}, n: map[string]map[string]int{}}
		for _, k := range replayKinds {
			p.n[k.kind] = map[string]int{}
			most := 0
			for _, v := range replayVerbs {
				p.n[k.kind][v] = int(float64(counts[m.name][k.kind][v])*frac + 0.5)
				most = max(most, p.n[k.kind][v])
			}
			if most == 0 {
				continue
			}
			t, err := replayTemplate(ctx, m, k.kind, k.gvr)
			if err != nil {
				return 0, nil, err
			}
			p.templates[k.kind] = t
			// Exports are the user's: sync only writes their status. Made here, untimed.
			if k.kind == "ServiceExport" {
				if err := parallel(max(b.workers, 1), p.n[k.kind]["status"], func(i int) error {
					_, err := m.sameDyn.Resource(k.gvr).Namespace(replayNS).Create(ctx, replayObject(t, k.kind, i), metav1.CreateOptions{})
					return err
				}); err != nil {
					return 0, nil, fmt.Errorf("%s: replay floor: exports: %w", m.name, err)
				}
			}
		}
		ready = append(ready, p)
	}

	if watched {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		// Two sets, each with clients of its own, as sync and the bench were: one factory would
		// share the kinds both watch and deliver those events once.
		for _, kinds := range []informerKinds{syncKinds, benchKinds} {
			if err := startInformers(wctx, b.kubeconfig, b.contexts, replayNS, kinds); err != nil {
				return 0, nil, fmt.Errorf("replay floor: watching it: %w", err)
			}
		}
	}
	t0, cpu0 := time.Now(), sampleCPU(syncs)
	var wg sync.WaitGroup
	errs := make([]error, len(ready))
	for pi, p := range ready {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created := map[string][]*unstructured.Unstructured{}
			for _, v := range replayVerbs {
				for _, k := range replayKinds {
					n := p.n[k.kind][v]
					if n == 0 {
						continue
					}
					if v == "create" {
						created[k.kind] = make([]*unstructured.Unstructured, n)
					}
					res := p.m.sameDyn.Resource(k.gvr).Namespace(replayNS)
					objects := n
					if v != "create" && len(created[k.kind]) > 0 {
						objects = len(created[k.kind])
					}
					err := inPasses(max(b.workers, 1), n, objects, func(i int) error {
						return retryTransient(ctx, func(again bool) error {
							return replayWrite(ctx, res, p.templates[k.kind], k.kind, v, i, created[k.kind], again)
						})
					})
					if err != nil {
						errs[pi] = fmt.Errorf("%s: replay floor: %s %s: %w", p.m.name, v, k.kind, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(t0).Seconds() / frac
	return took, sampleCPU(syncs).since(cpu0), errors.Join(errs...)
}

// inPasses makes writes 0..n-1 of objects objects, write i to object i % objects, workers at a
// time: a write sync made again on an object goes in a pass after the one before it, never beside
// it, so that each works from what the last left.
func inPasses(workers, n, objects int, write func(i int) error) error {
	for lo := 0; lo < n; lo += objects {
		if err := parallel(workers, min(objects, n-lo), func(j int) error { return write(lo + j) }); err != nil {
			return err
		}
	}
	return nil
}

// replayTemplate is one object sync wrote of kind in m.
func replayTemplate(ctx context.Context, m *member, kind string, gvr schema.GroupVersionResource) (*unstructured.Unstructured, error) {
	opts := metav1.ListOptions{Limit: 1}
	if kind == "Service" || kind == "ServiceImport" {
		opts.LabelSelector = names.ManagedByLabel + "=" + names.ManagedByValue
	}
	if kind == "EndpointSlice" {
		opts.LabelSelector = "endpointslice.kubernetes.io/managed-by=" + names.ManagedByValue
	}
	l, err := m.dyn.Resource(gvr).Namespace(ns).List(ctx, opts)
	if err != nil || len(l.Items) == 0 {
		return nil, fmt.Errorf("%s: replay floor: no %s of sync's to copy (%v)", m.name, kind, err)
	}
	return &l.Items[0], nil
}

// replayObject is template i, in the replay namespace, as a client would first send it: no
// identity, no owner (sync's points at an object that is not there), no allocated cluster IP.
func replayObject(t *unstructured.Unstructured, kind string, i int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": t.GetAPIVersion(), "kind": t.GetKind()}}
	u.SetName(fmt.Sprintf("floor-%s-%d", strings.ToLower(kind), i))
	u.SetNamespace(replayNS)
	u.SetLabels(t.GetLabels())
	u.SetAnnotations(t.GetAnnotations())
	for _, f := range []string{"spec", "addressType", "endpoints", "ports"} {
		if v, ok := t.Object[f]; ok {
			u.Object[f] = runtime.DeepCopyJSONValue(v) // shared by every writer; edited below
		}
	}
	if kind == "Service" {
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	}
	return u
}

// retryTransient runs write until it succeeds, fails for good or has timed out five times, as
// sync requeues a write the apiserver did not finish: an apiserver holding 10,000 services times
// out some writes of a replay at QPS 500, and the floor must not end there.
func retryTransient(ctx context.Context, write func(again bool) error) error {
	var err error
	for attempt := range 5 {
		if err = write(attempt > 0); err == nil || !(apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * time.Second):
		}
	}
	return err
}

// replayWrite makes write v of object i as sync makes it; again: an earlier attempt timed out,
// and may have made it.
func replayWrite(ctx context.Context, res interface {
	Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
}, t *unstructured.Unstructured, kind, v string, i int, created []*unstructured.Unstructured, again bool) error {
	if v != "create" && len(created) > 0 {
		i %= len(created) // sync wrote some objects more than once (a status written again)
	}
	o := replayObject(t, kind, i)
	force := true
	apply := metav1.PatchOptions{FieldManager: names.FieldManager, Force: &force}
	switch v {
	case "create":
		out, err := res.Create(ctx, o, metav1.CreateOptions{FieldManager: names.FieldManager})
		if again && apierrors.IsAlreadyExists(err) {
			out, err = res.Get(ctx, o.GetName(), metav1.GetOptions{})
		}
		if err == nil {
			created[i] = out
		}
		return err
	case "ownership":
		if i >= len(created) || created[i] == nil {
			return fmt.Errorf("object %d was not created", i)
		}
		// The patch sets the resourceVersion it was made from, which the apiserver holds it to: a
		// second hand-over of one object (sync wrote more than it created) patches what the first
		// left, or, with nothing left to hand over, costs the one request a read does.
		for attempt := 0; ; attempt++ {
			patch, err := csaupgrade.UpgradeManagedFieldsPatch(created[i], sets.New(names.FieldManager), names.FieldManager)
			if err != nil {
				return fmt.Errorf("no ownership patch for %s (%v)", o.GetName(), err)
			}
			if patch == nil {
				_, err = res.Get(ctx, o.GetName(), metav1.GetOptions{})
				return err
			}
			out, err := res.Patch(ctx, o.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
			if err == nil {
				created[i] = out
				return nil
			}
			if !apierrors.IsConflict(err) || attempt > 0 {
				return err
			}
			if created[i], err = res.Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
				return err
			}
		}
	case "update":
		body, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		if kind == "EndpointSlice" { // a merge patch, as sync updates its copies
			_, err = res.Patch(ctx, o.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: names.FieldManager})
			return err
		}
		_, err = res.Patch(ctx, o.GetName(), types.ApplyPatchType, body, apply)
		return err
	case "status":
		s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": t.GetAPIVersion(), "kind": t.GetKind(), "status": t.Object["status"]}}
		s.SetName(o.GetName())
		body, err := s.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = res.Patch(ctx, o.GetName(), types.ApplyPatchType, body, apply, "status")
		return err
	}
	return fmt.Errorf("verb %q not replayed", v)
}
