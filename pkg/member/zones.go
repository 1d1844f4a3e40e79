package member

// The zones of a member's nodes, for sync's caches (Config.FieldManager set): a member whose
// export prefers its own cluster hints its copies with them (engine.ChoiceOf). A Node is cached
// as its name and zone label alone; a change of the set of zones decides again every service
// whose export in the member makes that choice.

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// zones is what a Cache knows of its member's nodes.
type zones struct {
	mu     sync.Mutex
	store  cache.Store // nil: nodes not watched
	synced func() bool
	topo   *snapshot.Topology
	dirty  bool // topo is to be summed up again from store
	// denied: the member refuses to list its nodes. The join does not wait for them: a sync whose
	// identity predates the nodes rule (an install not run again) reads everything else as before,
	// and its members' choices are unknown, their copies' hints left as they are.
	denied atomic.Bool
}

// watchZones starts, for sync's caches, an informer of the member's Nodes whose sync the join
// waits for (hasSynced), unless the member refuses it; nothing for the others' (status --watch,
// the DNS server), nor in a member that a sync --local only reads (its hints use its own zones).
func (m *Cache) watchZones(ctx context.Context, kc kubernetes.Interface) error {
	if m.cfg.FieldManager == "" || !m.own() {
		return nil
	}
	inf := coreinformers.NewNodeInformer(kc, 0, cache.Indexers{})
	if err := inf.SetTransform(zoneOnly); err != nil {
		return err
	}
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			if !m.zones.denied.Swap(true) {
				klog.ErrorS(err, "nodes not readable: PreferSameCluster choices here are not applied (kubectl mcs install grants list and watch on nodes); retrying", "cluster", m.ID())
			}
			return
		}
		klog.V(2).InfoS("watch error", "cluster", m.ID(), "err", err)
	})
	changed := func(old, obj any) {
		if zoneOf(old) != zoneOf(obj) || old == nil || obj == nil {
			m.zonesChanged()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { changed(nil, obj) },
		UpdateFunc: changed,
		DeleteFunc: func(obj any) { changed(obj, nil) },
	}); err != nil {
		return err
	}
	m.zones.mu.Lock()
	m.zones.store, m.zones.synced, m.zones.dirty = inf.GetStore(), inf.HasSynced, true
	m.zones.mu.Unlock()
	m.hasSynced = append(m.hasSynced, func() bool { return inf.HasSynced() || m.zones.denied.Load() })
	go inf.Run(ctx.Done())
	return nil
}

// zoneOnly keeps of a Node its name and zone label.
func zoneOnly(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok { // a tombstone
		return obj, nil
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion}}
	if z := snapshot.ZoneOf(n); z != "" {
		out.Labels = map[string]string{corev1.LabelTopologyZone: z}
	}
	return out, nil
}

func zoneOf(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if n, ok := obj.(*corev1.Node); ok {
		return snapshot.ZoneOf(n)
	}
	return ""
}

// Topology is the zones of the member's nodes; nil when sync's caches do not watch them or have
// not read them (refused, or not yet).
func (m *Cache) Topology() *snapshot.Topology {
	z := &m.zones
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.store == nil || !z.synced() {
		return nil
	}
	if z.dirty {
		byNode := map[string]string{}
		for _, o := range z.store.List() {
			if n, ok := o.(*corev1.Node); ok {
				byNode[n.Name] = snapshot.ZoneOf(n)
			}
		}
		z.topo, z.dirty = snapshot.NewTopology(byNode), false
	}
	return z.topo
}

// zonesChanged marks the topology to be summed up again; once the member has joined, a change of
// its set of zones is told to Handlers.Object as an event (without object) of every export there
// that carries the choice, so that their services are decided again.
func (m *Cache) zonesChanged() {
	m.zones.mu.Lock()
	before := m.zones.topo
	m.zones.dirty = true
	m.zones.mu.Unlock()
	// The first topology read counts as a change: a member whose nodes became readable only after
	// it joined (the rule granted later) has choices waiting for it.
	if after := m.Topology(); m.State().Joined && after != nil && (before == nil || !slices.Equal(before.Zones, after.Zones)) {
		for _, k := range m.choosing() {
			if h := m.cfg.Handlers.Object; h != nil {
				h(m, snapshot.KindServiceExport, k, nil, false)
			}
		}
	}
}

// choosing are the services whose export in the member carries a traffic distribution choice.
func (m *Cache) choosing() []types.NamespacedName {
	var out []types.NamespacedName
	for _, o := range m.exports.List() {
		if a, err := meta.Accessor(o); err == nil {
			if _, ok := a.GetAnnotations()[names.TrafficDistributionAnnotation]; ok {
				out = append(out, types.NamespacedName{Namespace: a.GetNamespace(), Name: a.GetName()})
			}
		}
	}
	return out
}
