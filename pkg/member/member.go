// Package member reads the member clusters of a clusterset, for every command: one-shot lists
// (Read) and, for `sync` and `status --watch`, a Cache per member that joins when it can (retried with
// backoff until it answers and its caches have synced, however late), keeps informer caches of
// the kinds MCS reads, and probes its health. What was read comes out as snapshot types.
package member

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Handlers are what a Cache calls. Any may be nil.
type Handlers struct {
	// Object: an object changed in m; kind is a snapshot.Kind* other than KindNamespace, and
	// service is the service it concerns (ServiceOf).
	Object func(m *Cache, kind string, service types.NamespacedName, obj any, deleted bool)
	// Namespace: a namespace appeared, changed or went.
	Namespace func(name string)
	// Health: the member joined, or its reachability changed.
	Health func()
}

// Config is how Members read.
type Config struct {
	Namespace     string        // "" watches every namespace
	ProbeInterval time.Duration // default 1s
	// RetryCap bounds the wait between two attempts to join (default 15s).
	RetryCap time.Duration
	// BeforeStart runs on each attempt to join, once the served mcs-api version is known and
	// before the informers start; an error fails the attempt.
	BeforeStart func(ctx context.Context, m *Cache, version string) error
	Handlers    Handlers
	Now         func() time.Time
	// FieldManager is whose managedFields entries the caches keep; every other manager's are
	// dropped. With it set, the slices copied by sync are cached as metadata and a digest (Trim).
	FieldManager string
	// Cached, if set, is told what each event adds to a member's caches (negative: removes), by
	// kind (snapshot.KindNamespace included): objects and their estimated bytes (cachedSize).
	Cached func(cluster, kind string, objects, bytes int)
	// Kinds are the snapshot.Kind* the caches hold (nil: all); the others read as empty.
	Kinds []string
	// SliceSelector, if set, is the label selector of the EndpointSlices the caches hold.
	SliceSelector string
	// Local is the context of the one member a sync --local writes. The caches of every other
	// member leave out its Nodes and what kubectl-mcs manages there (names.NotManagedSelector):
	// the copies and derived Services other syncs write decide nothing of Local's objects, and
	// caching them made each sync's memory and events grow with the members.
	Local string
	// GivenID keeps the ID the member was connected with, its ClusterProperty unread: for a
	// reader that names no cluster and may not read it (the DNS server).
	GivenID bool
}

// Cache is one cluster's informer caches and health.
type Cache struct {
	*clusterset.Connection
	cfg Config
	ids *clusterIDs
	// gate holds the informers' requests while the member is unreachable (gate.go).
	gate  *gate
	zones zones // its nodes' zones (zones.go)

	// Set once, before joined: the stores hold typed objects (decode.Transform for the mcs-api
	// kinds, read from the stores since a dynamic lister expects unstructured ones).
	services   cache.Indexer
	slices     cache.Indexer // indexed by sliceIndex
	namespaces corelisters.NamespaceLister
	exports    cache.Indexer
	imports    cache.Indexer
	hasSynced  []cache.InformerSynced

	mu          sync.Mutex
	ref         clusterset.Ref // ID and IDSource: the Connection's until it joins (clusterid.go)
	joined      bool
	attempted   bool // an attempt to join has ended, either way
	reachable   bool
	unreachable time.Time // when it was last seen turning unreachable
	err         error     // why it has not joined, or why it is unreachable
	denied      error     // the last list or watch the member refused (Forbidden)
	failures    int       // probes failed in a row
	known       string    // the ID its property said at the last read as it joined (clusterid.go)
	version     string
}

// New prepares members; Run joins them.
func New(members []*clusterset.Connection, cfg Config) []*Cache {
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = time.Second
	}
	if cfg.RetryCap == 0 {
		cfg.RetryCap = 15 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	out := make([]*Cache, len(members))
	ids := &clusterIDs{members: out}
	for i, m := range members {
		out[i] = &Cache{Connection: m, cfg: cfg, ids: ids, ref: m.Ref, err: m.Err, gate: newGate()}
	}
	return out
}

// State is a consistent view of a member's lifecycle.
type State struct {
	Joined, Reachable bool
	// Since is when it last turned unreachable.
	Since time.Time
	// Err is why it has not joined (nil while its caches sync), or why it is unreachable.
	Err error
	// Denied is the last list or watch the member refused.
	Denied  error
	Version string
}

func (m *Cache) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return State{Joined: m.joined, Reachable: m.reachable, Since: m.unreachable, Err: m.err, Denied: m.denied, Version: m.version}
}

// Run joins the member, then probes it until ctx ends. A member without a client (its
// kubeconfig gave none) never joins.
func (m *Cache) Run(ctx context.Context) {
	if m.Client == nil {
		m.mu.Lock()
		m.attempted = true
		m.mu.Unlock()
		return
	}
	if !m.join(ctx) {
		return
	}
	m.probe(ctx)
}

// Wait waits until every member has joined or ended an attempt to (it is down, has no CRDs, or
// refuses a list), or the timeout.
func Wait(ctx context.Context, members []*Cache, timeout time.Duration) {
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		for _, m := range members {
			m.mu.Lock()
			done := m.joined || m.attempted || m.denied != nil
			m.mu.Unlock()
			if !done {
				return false, nil
			}
		}
		return true, nil
	})
}

func (m *Cache) join(ctx context.Context) bool {
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: m.cfg.RetryCap}
	last := ""
	for attempt := 0; ; attempt++ {
		err := m.start(ctx)
		if err == nil {
			break
		}
		m.mu.Lock()
		m.err, m.attempted = err, true
		m.mu.Unlock()
		switch {
		case idError(err) && err.Error() != last:
			klog.ErrorS(err, "member not joined: its cluster ID cannot be settled; retrying", "context", m.Context, "cluster", m.ID())
		case attempt == 0 && apierrors.IsForbidden(err):
			// A right the member refuses is for its admin to grant: said even where info lines are not.
			klog.ErrorS(err, "member not read: forbidden; retrying", "cluster", m.ID())
		case attempt == 0:
			klog.InfoS("member not read yet; retrying", "cluster", m.ID(), "err", err)
		default:
			klog.V(2).InfoS("member still not reachable", "cluster", m.ID(), "err", err)
		}
		if attempt == 0 && m.cfg.Handlers.Health != nil {
			m.cfg.Handlers.Health()
		}
		last = err.Error()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff.Step()):
		}
	}
	// The informers retry their lists by themselves; a late sync joins all the same.
	if wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, f := range m.hasSynced {
			if !f() {
				return false, nil
			}
		}
		return true, nil
	}) != nil {
		return false
	}
	m.mu.Lock()
	m.joined, m.attempted, m.reachable, m.err = true, true, true, nil
	m.mu.Unlock()
	// -v=2: one-shot commands join every member every time; a member that does not is said.
	klog.V(2).InfoS("member joined", "cluster", m.ID(), "mcsVersion", m.version)
	if m.cfg.Handlers.Health != nil {
		m.cfg.Handlers.Health()
	}
	return true
}

// start builds and runs the informers: only what MCS reads is watched.
func (m *Cache) start(ctx context.Context) error {
	v, err := mcsapi.ServedVersion(m.Discovery)
	if err != nil {
		return err
	}
	if err := m.settleID(ctx); err != nil {
		return err
	}
	if m.cfg.BeforeStart != nil {
		if err := m.cfg.BeforeStart(ctx, m, v); err != nil {
			return err
		}
	}
	kc, err := protobufClient(m.gate.config(m.Config))
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(m.gate.config(m.Config))
	if err != nil {
		return err
	}
	infs, run, err := m.informers(kc, dc, v)
	if err != nil {
		return err
	}
	m.hasSynced = nil
	for kind, inf := range infs {
		// Watch errors of an unreachable member are what the probe reports; a refusal is not.
		_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			if apierrors.IsForbidden(err) {
				m.deny(err)
				return
			}
			klog.V(2).InfoS("watch error", "cluster", m.ID(), "err", err)
		})
		if _, err := inf.AddEventHandler(m.handler(kind)); err != nil {
			return err
		}
		m.hasSynced = append(m.hasSynced, inf.HasSynced)
	}
	if err := m.watchZones(ctx, kc); err != nil {
		return err
	}
	m.mu.Lock()
	m.version = v
	m.mu.Unlock()
	run(ctx.Done())
	return nil
}

// deny records a list or watch the member refused. The reflector retries quietly, so it is said
// here, once per distinct refusal and loudly: a permission is missing (pkg/rbac lists sync's), or
// the apiserver has just restarted and not loaded its RBAC rules yet.
func (m *Cache) deny(err error) {
	m.mu.Lock()
	same := m.denied != nil && m.denied.Error() == err.Error()
	m.denied = err
	m.mu.Unlock()
	if !same {
		klog.ErrorS(err, "forbidden: a list or watch was refused; retrying", "cluster", m.ID())
	}
}

// handler passes events on.
func (m *Cache) handler(kind string) cache.ResourceEventHandler {
	h := m.cfg.Handlers
	on := func(obj any, deleted bool) {
		obj, err := eventObject(obj)
		if err != nil {
			klog.ErrorS(err, "a cached object does not decode", "cluster", m.ID(), "kind", kind)
			return
		}
		if kind == snapshot.KindNamespace {
			if n, ok := obj.(*corev1.Namespace); ok && h.Namespace != nil {
				h.Namespace(n.Name)
			}
			return
		}
		if h.Object != nil {
			h.Object(m, kind, ServiceOf(obj), obj, deleted)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			m.count(kind, nil, obj)
			on(obj, false)
		},
		UpdateFunc: func(old, obj any) {
			// A relist delivers every object again; one whose version did not change says
			// nothing new (as in sample-controller), nor changes what the caches hold.
			if o, err := meta.Accessor(old); err == nil {
				if n, err := meta.Accessor(obj); err == nil && o.GetResourceVersion() != "" && o.GetResourceVersion() == n.GetResourceVersion() {
					return
				}
			}
			m.count(kind, old, obj)
			on(obj, false)
		},
		DeleteFunc: func(obj any) {
			m.count(kind, obj, nil)
			on(obj, true)
		},
	}
}

// View is the member as its caches see it now.
func (m *Cache) View() snapshot.Cluster {
	s := m.State()
	c := snapshot.Cluster{ID: m.ID(), Context: m.Context, IDSource: m.IDSource(), MCSAPIVersion: s.Version}
	switch {
	case s.Joined && s.Reachable:
		c.State = snapshot.Reachable
	case s.Joined:
		c.State, c.LastKnown = snapshot.Unreachable, true
	case errors.As(s.Err, &mcsapi.ErrNotInstalled{}):
		c.State = snapshot.NoCRDs
	default:
		c.State = snapshot.Unreachable
	}
	switch {
	case c.State == snapshot.Reachable:
	case s.Err != nil:
		c.Message = s.Err.Error()
	case !s.Joined:
		c.Message = "caches not synced yet"
	}
	if !s.Joined {
		return c
	}
	c.Services = listAs[corev1.Service](m.services.List())
	c.EndpointSlices = listAs[discoveryv1.EndpointSlice](m.slices.List())
	nss, _ := m.namespaces.List(labels.Everything())
	for _, n := range nss {
		c.Namespaces = append(c.Namespaces, n.Name)
	}
	c.ServiceExports = decode.List[mcsv1beta1.ServiceExport](m.exports)
	c.ServiceImports = listAs[mcsv1beta1.ServiceImport](m.imports.List())
	c.Topology = m.Topology()
	return c
}

// Unreachable says why the member cannot be read now; "" when it can.
func (s State) Unreachable() string {
	switch {
	case !s.Joined && s.Err != nil:
		return s.Err.Error()
	case !s.Joined && s.Denied != nil:
		return s.Denied.Error()
	case !s.Joined:
		return "caches not synced yet"
	case !s.Reachable:
		return "unreachable since " + s.Since.Format(time.RFC3339)
	}
	return ""
}
