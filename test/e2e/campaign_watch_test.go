//go:build e2e

package e2e

// The fault campaign's event watch: every event of the managed EndpointSlices and ServiceImports
// in every member, from before the first sync on, checked as it arrives.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// eventWatch records every event of the EndpointSlices and ServiceImports that sync manages in
// the campaign's namespace of every member, from before the first sync on. When a watch cannot
// resume (the member was down and its resourceVersion expired), it lists again and takes every
// object it knew that is gone as deleted.
type eventWatch struct {
	mu     sync.Mutex
	ns     string
	start  time.Time
	stable map[string]map[string]bool // exporters of each unchanged service
	counts map[string]map[watch.EventType]int
	// deletes are the managed slices deleted; added, member/service/source of every slice seen
	// created; complete, member/service of every unchanged service's import seen listing all
	// its exporters.
	deletes         []sliceEvent
	added, complete map[string]bool
	violations      []string
	relists         int
	cancel          context.CancelFunc
	done            sync.WaitGroup
}

type sliceEvent struct {
	member, name, service, source string
	at                            time.Duration
	gap                           bool
}

var watchedKinds = []struct {
	kind, selector string
	gvr            schema.GroupVersionResource
}{
	{"EndpointSlice", lblSliceManagedBy + "=" + managedValue, schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}},
	{"ServiceImport", lblManagedBy + "=" + managedValue, siGVR("v1beta1")},
}

func startEventWatch(t *testing.T, ns string, start time.Time, stable map[string]map[string]bool) *eventWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ew := &eventWatch{ns: ns, start: start, stable: stable, counts: map[string]map[watch.EventType]int{},
		added: map[string]bool{}, complete: map[string]bool{}, cancel: cancel}
	for _, k := range watchedKinds {
		ew.counts[k.kind] = map[watch.EventType]int{}
		for _, m := range members {
			api := clients[m].dyn.Resource(k.gvr).Namespace(ns)
			l, err := api.List(ctx, metav1.ListOptions{LabelSelector: k.selector})
			if err != nil {
				t.Fatalf("%s: listing %ss: %v", m, k.kind, err)
			}
			live := map[types.UID]*unstructured.Unstructured{}
			for i := range l.Items {
				live[l.Items[i].GetUID()] = &l.Items[i]
			}
			ew.done.Add(1)
			go func() {
				defer ew.done.Done()
				ew.run(ctx, m, k.kind, k.selector, api, l.GetResourceVersion(), live)
			}()
		}
	}
	t.Cleanup(ew.stop)
	return ew
}

func (ew *eventWatch) stop() {
	ew.cancel()
	ew.done.Wait()
}

func (ew *eventWatch) run(ctx context.Context, m, kind, sel string, api dynamic.ResourceInterface, rv string, live map[types.UID]*unstructured.Unstructured) {
	for ctx.Err() == nil {
		w, err := api.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ew.relist(ctx, m, kind, sel, api, live)
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					rv = ew.relist(ctx, m, kind, sel, api, live)
				}
				break
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			ew.mu.Lock()
			ew.counts[kind][ev.Type]++
			if ev.Type == watch.Deleted {
				delete(live, u.GetUID())
			} else {
				live[u.GetUID()] = u
			}
			ew.on(m, kind, ev.Type, u, false)
			ew.mu.Unlock()
		}
		w.Stop()
	}
}

// on checks one event; called with ew.mu held.
func (ew *eventWatch) on(m, kind string, typ watch.EventType, u *unstructured.Unstructured, gap bool) {
	at := time.Since(ew.start).Round(time.Millisecond)
	how := "a DELETE event"
	if gap {
		how = "gone when the watch resumed"
	}
	switch kind {
	case "EndpointSlice":
		l := u.GetLabels()
		switch typ {
		case watch.Added:
			ew.added[m+"/"+l[lblMCSService]+"/"+l[lblSourceCluster]] = true
		case watch.Deleted:
			ew.deletes = append(ew.deletes, sliceEvent{member: m, name: u.GetName(), service: l[lblMCSService],
				source: l[lblSourceCluster], at: time.Since(ew.start), gap: gap})
		}
	case "ServiceImport":
		exporters := ew.stable[u.GetName()]
		if exporters == nil {
			return
		}
		key := m + "/" + u.GetName()
		if typ == watch.Deleted {
			ew.violations = append(ew.violations, fmt.Sprintf("%s: ServiceImport of unchanged service %s deleted at %v (%s)", m, u.GetName(), at, how))
			return
		}
		clusters, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		var got []string
		for _, c := range clusters {
			if cm, ok := c.(map[string]any); ok {
				got = append(got, fmt.Sprint(cm["cluster"]))
			}
		}
		sort.Strings(got)
		want := sortedKeys(exporters)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			ew.complete[key] = true
		} else if ew.complete[key] {
			ew.violations = append(ew.violations, fmt.Sprintf("%s: ServiceImport of unchanged service %s says status.clusters %v at %v, after %v",
				m, u.GetName(), got, at, want))
		}
	}
}

// relist replaces live with a fresh list, checking what changed while nobody watched.
func (ew *eventWatch) relist(ctx context.Context, m, kind, sel string, api dynamic.ResourceInterface, live map[types.UID]*unstructured.Unstructured) string {
	for ctx.Err() == nil {
		l, err := api.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		now := map[types.UID]bool{}
		for _, o := range l.Items {
			now[o.GetUID()] = true
		}
		ew.mu.Lock()
		ew.relists++
		for uid, o := range live {
			if !now[uid] {
				ew.on(m, kind, watch.Deleted, o, true)
				delete(live, uid)
			}
		}
		for i := range l.Items {
			o := &l.Items[i]
			typ := watch.Modified
			if live[o.GetUID()] == nil {
				typ = watch.Added
			}
			live[o.GetUID()] = o
			ew.on(m, kind, typ, o, true)
		}
		ew.mu.Unlock()
		return l.GetResourceVersion()
	}
	return ""
}
