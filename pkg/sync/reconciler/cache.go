package reconciler

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// member is one cluster's informer caches and health.
type member struct {
	*clusterset.Member
	version string // mcs-api version the cluster serves

	services   corelisters.ServiceLister
	slices     cache.Indexer // EndpointSlices, indexed by sliceIndex
	namespaces corelisters.NamespaceLister
	// The dynamic informers' stores, holding typed objects (decode.Transform): not read through
	// a dynamic lister, which expects unstructured ones.
	exports   cache.Indexer
	imports   cache.Indexer
	hasSynced []cache.InformerSynced
	recent    recent // our writes the informers have not shown yet

	// Guarded by mu. synced is set once, when the caches first synced: from then on the member
	// has been read, and the stores above are complete (they are set before it).
	mu          sync.Mutex
	synced      bool
	reachable   bool
	unreachable time.Time // when it was last seen turning unreachable
	joinErr     error     // why it has not joined yet
	denied      error     // the last read an informer was refused (Forbidden)
	// The member's served ServiceImport/ServiceExport schemas (nil: declare everything).
	importSchema, exportSchema engine.Pruner
}

// state is a consistent snapshot of the member's lifecycle.
func (m *member) state() (synced, reachable bool, since time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.synced, m.reachable, m.unreachable
}

// joinBackoff paces the attempts to reach a member that is down or has no mcs-api CRDs yet.
func joinBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: 15 * time.Second}
}

// join reaches a member until it answers, starts its informers and waits, as long as it takes,
// for their first sync; only then does the member count as read. Until that, what the
// clusterset recorded about it stands (engine.Observed).
func (r *Reconciler) join(ctx context.Context, m *member) {
	backoff := joinBackoff()
	for attempt := 0; ; attempt++ {
		err := m.start(ctx, r.opts.Namespace, handlers{service: r.queue.Add, namespace: r.namespaceChanged}, r.opts.LoadSchemas)
		if err == nil {
			break
		}
		m.mu.Lock()
		m.joinErr = err
		m.mu.Unlock()
		if attempt == 0 {
			klog.InfoS("member not read yet; retrying, its recorded exports stand meanwhile", "cluster", m.ID, "err", err)
		} else {
			klog.V(2).InfoS("member still not reachable", "cluster", m.ID, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
	// The informers retry their lists by themselves; a late sync joins all the same.
	if wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return m.cachesSynced(), nil
	}) != nil {
		return
	}
	m.mu.Lock()
	m.synced, m.reachable, m.joinErr = true, true, nil
	m.mu.Unlock()
	klog.InfoS("member joined", "cluster", m.ID, "mcsVersion", m.version)
	r.requeueAll()
	r.probe(ctx, m)
}

// handlers are what an informer event asks of the reconciler: decide one service again, or every
// service in a namespace (one that appeared or went).
type handlers struct {
	service   func(key)
	namespace func(ns string)
}

// start builds and runs the informers. Only what the engine reads is watched; onChange gets the
// service key ("ns/name") that an event concerns.
func (m *member) start(ctx context.Context, namespace string, on handlers, loadSchemas SchemaLoader) error {
	v, err := mcsapi.ServedVersion(m.Discovery)
	if err != nil {
		return err
	}
	if loadSchemas != nil {
		imp, exp, err := loadSchemas(ctx, m.Member, v)
		if err != nil {
			return fmt.Errorf("reading the served mcs-api schemas: %w", err)
		}
		m.importSchema, m.exportSchema = engine.Pruning(imp, engine.KindServiceImport), engine.Pruning(exp, engine.KindServiceExportStatus)
	}
	m.version = v
	kf := informers.NewSharedInformerFactoryWithOptions(m.Client, 0, informers.WithNamespace(namespace))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m.Dynamic, 0, namespace, nil)

	svcInf := kf.Core().V1().Services()
	sliceInf := kf.Discovery().V1().EndpointSlices()
	nsInf := kf.Core().V1().Namespaces()
	seInf := df.ForResource(mcsapi.GVR(v, mcsapi.ServiceExports))
	siInf := df.ForResource(mcsapi.GVR(v, mcsapi.ServiceImports))
	if err := sliceInf.Informer().AddIndexers(cache.Indexers{sliceIndex: sliceKeys}); err != nil {
		return err
	}
	// Decoded once as they arrive rather than on every sync round that reads them.
	if err := seInf.Informer().SetTransform(decode.Transform[mcsv1beta1.ServiceExport]); err != nil {
		return err
	}
	if err := siInf.Informer().SetTransform(decode.Transform[mcsv1beta1.ServiceImport]); err != nil {
		return err
	}
	m.services, m.slices, m.namespaces = svcInf.Lister(), sliceInf.Informer().GetIndexer(), nsInf.Lister()
	m.exports, m.imports = seInf.Informer().GetIndexer(), siInf.Informer().GetIndexer()

	// kind names the objects in m.recent; "" for those we never write.
	handler := func(kind string, keyOf func(obj any) []key) cache.ResourceEventHandler {
		fire := func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			for _, k := range keyOf(obj) {
				on.service(k)
			}
		}
		gone := func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if o, ok := obj.(metav1.Object); ok && kind != "" {
				m.recent.gone(kind, o) // before the sync it triggers decides
			}
			fire(obj)
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: fire, DeleteFunc: gone, UpdateFunc: func(_, n any) { fire(n) }}
	}
	byName := func(obj any) []key {
		o, ok := obj.(interface {
			GetNamespace() string
			GetName() string
		})
		if !ok {
			return nil
		}
		return []key{{Namespace: o.GetNamespace(), Name: o.GetName()}}
	}
	reg := func(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
		_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			if apierrors.IsForbidden(err) {
				m.deny(err)
				return
			}
			klog.V(2).InfoS("watch error", "cluster", m.ID, "err", err)
		})
		_, err := inf.AddEventHandler(h)
		m.hasSynced = append(m.hasSynced, inf.HasSynced)
		return err
	}
	errs := []error{
		reg(svcInf.Informer(), handler(engine.KindService, func(obj any) []key {
			s, ok := obj.(*corev1.Service)
			if !ok {
				return nil
			}
			if n := s.Labels[mcsv1beta1.LabelServiceName]; n != "" && names.IsManaged(s.Labels) {
				return []key{{Namespace: s.Namespace, Name: n}}
			}
			return []key{{Namespace: s.Namespace, Name: s.Name}}
		})),
		reg(sliceInf.Informer(), handler(engine.KindEndpointSlice, func(obj any) []key {
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok {
				return nil
			}
			if names.IsManaged(s.Labels) {
				if n := s.Labels[mcsv1beta1.LabelServiceName]; n != "" {
					return []key{{Namespace: s.Namespace, Name: n}}
				}
				return nil
			}
			if n := s.Labels[discoveryv1.LabelServiceName]; n != "" {
				return []key{{Namespace: s.Namespace, Name: n}}
			}
			return nil
		})),
		reg(nsInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { on.namespace(nameOf(obj)) },
			UpdateFunc: func(_, obj any) { on.namespace(nameOf(obj)) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				on.namespace(nameOf(obj))
			},
		}),
		reg(seInf.Informer(), handler(engine.KindServiceExportStatus, byName)),
		reg(siInf.Informer(), handler(engine.KindServiceImport, byName)),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	kf.Start(ctx.Done())
	df.Start(ctx.Done())
	return nil
}

// sliceIndex finds a service's slices without scanning the namespace: a source slice under
// "ns/src/SERVICE" (kubernetes.io/service-name), an MCS copy under "ns/mcs/SERVICE".
const sliceIndex = "service"

func sliceKeys(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	var out []string
	if n := s.Labels[discoveryv1.LabelServiceName]; n != "" {
		out = append(out, s.Namespace+"/src/"+n)
	}
	if n := s.Labels[mcsv1beta1.LabelServiceName]; n != "" {
		out = append(out, s.Namespace+"/mcs/"+n)
	}
	return out, nil
}

func nameOf(obj any) string {
	if o, ok := obj.(interface{ GetName() string }); ok {
		return o.GetName()
	}
	return ""
}

// deny records a list or watch the member refused. The reflector retries quietly, so it is said
// here, once per distinct refusal and loudly: sync lacks a permission (pkg/rbac lists them), or
// the apiserver has just restarted and not loaded its RBAC rules yet.
func (m *member) deny(err error) {
	m.mu.Lock()
	same := m.denied != nil && m.denied.Error() == err.Error()
	m.denied = err
	m.mu.Unlock()
	if !same {
		klog.ErrorS(err, "forbidden: a list or watch sync needs was refused; retrying", "cluster", m.ID)
	}
}

func (m *member) cachesSynced() bool {
	for _, f := range m.hasSynced {
		if !f() {
			return false
		}
	}
	return true
}

// keys lists every service this cluster's caches say needs a decision: exported ones and those
// that still have objects of ours; in namespace ns, or in all of them when ns is "".
func (m *member) keys(ns string) []key {
	seen := map[key]bool{}
	add := func(objNS, n string) {
		if ns == "" || objNS == ns {
			seen[key{Namespace: objNS, Name: n}] = true
		}
	}
	in := func(store cache.Indexer) []any {
		if ns != "" {
			if l, err := store.ByIndex(cache.NamespaceIndex, ns); err == nil {
				return l
			}
		}
		return store.List()
	}
	for _, o := range in(m.exports) {
		if a, err := meta.Accessor(o); err == nil {
			add(a.GetNamespace(), a.GetName())
		}
	}
	for _, o := range in(m.imports) {
		if a, err := meta.Accessor(o); err == nil && names.IsManaged(a.GetLabels()) {
			add(a.GetNamespace(), a.GetName())
		}
	}
	for _, o := range in(m.slices) {
		s := o.(*discoveryv1.EndpointSlice)
		if n := s.Labels[mcsv1beta1.LabelServiceName]; n != "" && s.Labels[names.EndpointSliceManagedByLabel] == names.EndpointSliceManagedByValue {
			add(s.Namespace, n)
		}
	}
	return slices.Collect(maps.Keys(seen))
}

// probe watches a member's health; a change in reachability re-decides every service.
func (r *Reconciler) probe(ctx context.Context, m *member) {
	if m.Client == nil {
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		err := clusterset.Probe(ctx, m.Discovery, r.opts.ProbeInterval)
		m.mu.Lock()
		was := m.reachable
		m.reachable = err == nil
		if was && !m.reachable {
			m.unreachable = r.now()
		}
		m.mu.Unlock()
		if was != m.reachable {
			klog.InfoS("member reachability changed", "cluster", m.ID, "reachable", m.reachable)
			r.requeueAll()
		}
	}, r.opts.ProbeInterval)
}

func (r *Reconciler) evictExpired(context.Context) {
	for _, m := range r.members {
		m.mu.Lock()
		expired := !m.reachable && !m.unreachable.IsZero() && r.now().Sub(m.unreachable) > r.opts.UnreachableTimeout
		m.mu.Unlock()
		if expired {
			r.requeueAll()
			return
		}
	}
}
