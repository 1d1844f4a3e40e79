// Package reconciler is the thin layer between the pure engine (pkg/sync/engine) and the member
// clusters: informers in, server-side apply of the engine's plan out.
package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// Options tune the reconciler.
type Options struct {
	Namespace          string // "" watches every namespace
	FieldManager       string
	DryRun             bool
	UnreachableTimeout time.Duration // 0 keeps an unreachable member's endpoints forever
	ProbeInterval      time.Duration // health probe period in watch mode (default 1s)
	Metrics            *Metrics      // nil: no metrics
	// LoadSchemas reads a member's served ServiceImport and ServiceExport schemas when it joins
	// (nil: every field is written).
	LoadSchemas SchemaLoader
}

// SchemaLoader reads the served ServiceImport and ServiceExport schemas of mcs-api version v.
type SchemaLoader func(ctx context.Context, m *clusterset.Member, v string) (imp, exp engine.Pruner, err error)

// Change is one write the reconciler made (or would make, under dry run).
type Change struct {
	Cluster, Kind, Namespace, Name, Action string
	Object                                 runtime.Object `json:"-"`
}

// Reconciler keeps the clusterset in sync.
type Reconciler struct {
	opts    Options
	members []*member
	queue   workqueue.TypedRateLimitingInterface[string]
	writes  atomic.Int64

	mu         sync.Mutex
	conflicts  map[string][]engine.Conflict
	nConflicts int // total of conflicts, for the metric without walking them
	skips      map[string][]string
	changes    []Change
	started    bool
	now        func() time.Time
}

// New prepares a reconciler over the members; unreachable ones are kept as such.
func New(members []*clusterset.Member, opts Options) *Reconciler {
	if opts.FieldManager == "" {
		opts.FieldManager = names.FieldManager
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = time.Second
	}
	r := &Reconciler{
		opts:      opts,
		conflicts: map[string][]engine.Conflict{},
		skips:     map[string][]string{},
		now:       time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "kubectl-mcs"}),
	}
	for _, m := range members {
		r.members = append(r.members, &member{Member: m, joinErr: m.Err})
	}
	return r
}

// Start joins every member in the background: each is retried with backoff until it answers
// and its caches sync, however late (see join).
func (r *Reconciler) Start(ctx context.Context) {
	for _, m := range r.members {
		if m.Client == nil {
			continue // no client could be built from its kubeconfig: nothing to retry
		}
		go r.join(ctx, m)
	}
}

// WaitForSync waits until every member that answered at connect has joined, or the timeout.
// Members that have not are not read: their recorded exports stand, and they join when they can.
func (r *Reconciler) WaitForSync(ctx context.Context, timeout time.Duration) {
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		for _, m := range r.members {
			if synced, _, _ := m.state(); !synced && m.Err == nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// Unreachable lists the members that cannot be read now, with why.
func (r *Reconciler) Unreachable() map[string]string {
	out := map[string]string{}
	for _, m := range r.members {
		m.mu.Lock()
		switch {
		case !m.synced && m.joinErr != nil:
			out[m.ID] = "not read: " + m.joinErr.Error()
		case !m.synced:
			out[m.ID] = "not read: caches not synced yet"
		case !m.reachable:
			out[m.ID] = "unreachable since " + m.unreachable.Format(time.RFC3339)
		}
		m.mu.Unlock()
	}
	return out
}

// requeueAll asks for a decision on every known service (a member joined, or its reachability
// changed).
func (r *Reconciler) requeueAll() {
	for _, k := range r.allKeys() {
		r.queue.Add(k)
	}
}

func (r *Reconciler) enqueue(key string) {
	if ns, ok := strings.CutPrefix(key, "namespace:"); ok {
		// A namespace appeared or went: every service in it may import there now. Found by
		// namespace index: at start-up every namespace arrives as an event.
		for _, k := range r.keysIn(ns) {
			r.queue.Add(k)
		}
		return
	}
	r.queue.Add(key)
}

func (r *Reconciler) allKeys() []string { return r.keysIn("") }

// keysIn is every service key that some member knows in namespace ns ("": all), sorted.
func (r *Reconciler) keysIn(ns string) []string {
	seen := map[string]bool{}
	for _, m := range r.members {
		if synced, _, _ := m.state(); !synced {
			continue
		}
		for _, k := range m.keys(ns) {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SyncAll reconciles every known service until nothing is left to do (or maxPasses): the one-shot
// `kubectl mcs sync`. Later passes pick up what the apiservers filled in, such as the derived
// Service's cluster IP that the ServiceImport must carry.
func (r *Reconciler) SyncAll(ctx context.Context) error {
	const maxPasses = 10
	for pass := 0; pass < maxPasses; pass++ {
		before := r.writes.Load()
		var errs []string
		for _, k := range r.allKeys() {
			if err := r.syncKey(ctx, k); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		if r.writes.Load() == before || r.opts.DryRun {
			return nil
		}
		// Let the informers see our own writes before deciding again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return nil
}

// Run processes the queue until ctx ends: the `--watch` loop.
func (r *Reconciler) Run(ctx context.Context, workers int) {
	defer r.queue.ShutDown()
	r.requeueAll()
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, r.worker, time.Second)
	}
	if r.opts.UnreachableTimeout > 0 {
		go wait.UntilWithContext(ctx, r.evictExpired, r.opts.UnreachableTimeout/4+time.Second)
	}
	<-ctx.Done()
}

func (r *Reconciler) worker(ctx context.Context) {
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		if r.opts.Metrics != nil {
			r.opts.Metrics.QueueDepth.Set(float64(r.queue.Len()))
		}
		err := r.syncKey(ctx, key)
		if err != nil {
			klog.ErrorS(err, "sync failed, will retry", "service", key)
			r.queue.AddRateLimited(key)
		} else {
			r.queue.Forget(key)
		}
		r.queue.Done(key)
	}
}

// probe watches a member's health; a change in reachability re-decides every service.
func (r *Reconciler) probe(ctx context.Context, m *member) {
	if m.Client == nil {
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		pctx, cancel := context.WithTimeout(ctx, r.opts.ProbeInterval)
		err := m.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(pctx).Error()
		cancel()
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

// observe gathers what every read member knows of one service. Members not read yet are left
// out (the engine keeps what the clusterset recorded about them); so is, for this service only, a
// member whose ServiceExport does not decode, which is reported in problems.
func (r *Reconciler) observe(ns, name string) (obs engine.Observed, problems []string) {
	obs = engine.Observed{Now: metav1.NewTime(r.now()), FieldManager: r.opts.FieldManager,
		Services: []types.NamespacedName{{Namespace: ns, Name: name}}}
	derived := names.DerivedServiceName(name)
	ours := labels.SelectorFromSet(labels.Set{mcsv1beta1.LabelServiceName: name})
	for _, m := range r.members {
		obs.Members = append(obs.Members, m.ID)
		synced, reachable, since := m.state()
		if !synced {
			continue
		}
		if !reachable && r.opts.UnreachableTimeout > 0 && r.now().Sub(since) > r.opts.UnreachableTimeout {
			obs.Evicted = append(obs.Evicted, m.ID) // its endpoints leave the other clusters
			continue
		}
		cs := engine.ClusterState{ID: m.ID, Reachable: reachable, ImportSchema: m.importSchema, ExportSchema: m.exportSchema}
		// A terminating namespace imports nothing: creates there would fail until it is gone.
		if n, err := m.namespaces.Get(ns); err == nil && n.DeletionTimestamp == nil && n.Status.Phase != corev1.NamespaceTerminating {
			cs.Namespaces = []string{ns}
		}
		named := func(o metav1.Object) bool { return o.GetName() == name }
		se, err := cached[mcsv1beta1.ServiceExport](m.exports, ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceExport %s/%s: %v; what this cluster recorded for it stands", m.ID, ns, name, err))
			continue
		}
		cs.ServiceExports = overlay(&m.recent, engine.KindServiceExportStatus, ns, se, func(o *mcsv1beta1.ServiceExport) bool { return named(o) })
		si, err := cached[mcsv1beta1.ServiceImport](m.imports, ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceImport %s/%s: %v; not importing there", m.ID, ns, name, err))
			continue
		}
		cs.ServiceImports = overlay(&m.recent, engine.KindServiceImport, ns, si, func(o *mcsv1beta1.ServiceImport) bool { return named(o) })
		for _, n := range []string{name, derived} {
			if s, err := m.services.Services(ns).Get(n); err == nil {
				cs.Services = append(cs.Services, s)
			}
		}
		cs.Services = overlay(&m.recent, engine.KindService, ns, cs.Services, func(o *corev1.Service) bool { return o.Name == derived })
		seen := map[string]bool{}
		for _, k := range []string{ns + "/src/" + name, ns + "/src/" + derived, ns + "/mcs/" + name} {
			l, _ := m.slices.ByIndex(sliceIndex, k)
			for _, o := range l {
				if s := o.(*discoveryv1.EndpointSlice); !seen[s.Name] {
					seen[s.Name] = true
					cs.EndpointSlices = append(cs.EndpointSlices, s)
				}
			}
		}
		cs.EndpointSlices = overlay(&m.recent, engine.KindEndpointSlice, ns, cs.EndpointSlices, func(o *discoveryv1.EndpointSlice) bool {
			return ours.Matches(labels.Set(o.Labels))
		})
		obs.Clusters = append(obs.Clusters, cs)
	}
	return obs, problems
}

// cached is the object ns/name of a dynamic informer's store as a *T: none or one.
func cached[T any](store cache.Store, ns, name string) ([]*T, error) {
	t, err := decode.Cached[T](store, ns+"/"+name)
	if t == nil {
		return nil, err
	}
	return []*T{t}, nil
}

// syncKey decides and applies one service.
func (r *Reconciler) syncKey(ctx context.Context, key string) error {
	start := time.Now()
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	// Rounds: each applies, in every cluster at once, only the first kind of work the plan has for
	// it, then decides again from what the writes returned. Dependents are thus written once,
	// complete: owner references carry the owner's UID, the import the derived Service's IP, the
	// export's Ready condition the imports just made.
	const maxRounds = 8
	var errs []string
	for round := 0; ; round++ {
		obs, problems := r.observe(ns, name)
		want := engine.Compute(obs)
		actions := engine.Plan(obs, want)
		r.record(key, want, problems)
		if len(actions) == 0 {
			break
		}
		if round == maxRounds {
			// Unusual churn, or an apiserver that drops what we write: back off, never spin.
			errs = append(errs, fmt.Sprintf("service %s still wants writes after %d rounds (first: %s %s %s/%s in %q); retrying with backoff",
				key, maxRounds, actions[0].Verb, actions[0].Kind, actions[0].Namespace, actions[0].Name, actions[0].Cluster))
			break
		}
		if r.opts.DryRun {
			r.recordChanges(actions)
			break
		}
		if errs = r.executeRound(ctx, obs, firstKindPerCluster(actions)); len(errs) > 0 {
			break
		}
	}
	if m := r.opts.Metrics; m != nil {
		m.SyncLatency.Observe(time.Since(start).Seconds())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

var (
	gvrServices = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrSlices   = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// record keeps the conflicts and skipped objects of one service for the reports.
func (r *Reconciler) record(key string, want engine.Desired, problems []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nConflicts += len(want.Conflicts) - len(r.conflicts[key])
	if len(want.Conflicts) > 0 {
		r.conflicts[key] = want.Conflicts
	} else {
		delete(r.conflicts, key)
	}
	if m := r.opts.Metrics; m != nil {
		m.Conflicts.Set(float64(r.nConflicts))
	}
	skips := append([]string(nil), problems...)
	for id, cd := range want.Clusters {
		for _, s := range cd.Skipped {
			skips = append(skips, fmt.Sprintf("cluster %q: %s %s/%s: %s", id, s.Kind, s.Namespace, s.Name, s.Message))
		}
		for _, h := range cd.Held {
			if h.Outside {
				skips = append(skips, fmt.Sprintf("cluster %q: %s %s/%s: its source cluster %q is not in the clusterset; left alone",
					id, h.Kind, h.Namespace, h.Name, h.Source))
			}
		}
	}
	sort.Strings(skips)
	r.skips[key] = skips
}

func (r *Reconciler) recordChanges(actions []engine.Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range actions {
		r.changes = append(r.changes, Change{Cluster: a.Cluster, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name, Action: a.Verb, Object: a.Object})
	}
}

// firstKindPerCluster keeps, for each cluster, the actions of the earliest kind it has (the
// plan is sorted by cluster, then kind).
func firstKindPerCluster(actions []engine.Action) [][]engine.Action {
	var out [][]engine.Action
	for i, a := range actions {
		if i == 0 || a.Cluster != actions[i-1].Cluster {
			out = append(out, []engine.Action{a})
			continue
		}
		if last := out[len(out)-1]; last[0].Kind == a.Kind {
			out[len(out)-1] = append(last, a)
		}
	}
	return out
}

// executeRound runs each cluster's actions in order, the clusters concurrently.
func (r *Reconciler) executeRound(ctx context.Context, obs engine.Observed, perCluster [][]engine.Action) []string {
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for _, actions := range perCluster {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, a := range actions {
				if err := r.execute(ctx, obs, a); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
					return
				}
				r.recordChanges([]engine.Action{a})
			}
		}()
	}
	wg.Wait()
	sort.Strings(errs)
	return errs
}

func (r *Reconciler) member(id string) *member {
	for _, m := range r.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// execute performs one planned action with server-side apply (or a delete).
func (r *Reconciler) execute(ctx context.Context, obs engine.Observed, a engine.Action) error {
	m := r.member(a.Cluster)
	ref := fmt.Sprintf("cluster %q: %s %s/%s", a.Cluster, a.Kind, a.Namespace, a.Name)
	if r.opts.DryRun {
		return nil
	}
	var gvr schema.GroupVersionResource
	var apiVersion, kind, sub string
	switch a.Kind {
	case engine.KindServiceImport:
		gvr, apiVersion, kind = mcsapi.GVR(m.version, mcsapi.ServiceImports), mcsapi.Group+"/"+m.version, mcsv1beta1.ServiceImportKindName
	case engine.KindService:
		gvr, apiVersion, kind = gvrServices, "v1", "Service"
	case engine.KindEndpointSlice:
		gvr, apiVersion, kind = gvrSlices, "discovery.k8s.io/v1", "EndpointSlice"
	case engine.KindServiceExportStatus:
		gvr, apiVersion, kind = mcsapi.GVR(m.version, mcsapi.ServiceExports), mcsapi.Group+"/"+m.version, mcsv1beta1.ServiceExportKindName
	default:
		return fmt.Errorf("%s: unknown kind", ref)
	}
	res := m.Dynamic.Resource(gvr).Namespace(a.Namespace)
	r.writes.Add(1)
	if r.opts.Metrics != nil {
		r.opts.Metrics.Writes.WithLabelValues(a.Cluster, a.Kind, a.Verb).Inc()
	}
	last := observedObject(obs, a)
	if a.Verb == engine.VerbDelete {
		var opts metav1.DeleteOptions
		if last != nil && last.GetUID() != "" {
			// Only the object we decided about: not one somebody made in its place since.
			uid := last.GetUID()
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		err := res.Delete(ctx, a.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("%s: delete: %w", ref, err)
		}
		if last != nil {
			m.recent.deleted(a.Kind, last)
		}
		return nil
	}
	body, err := applyBody(a, apiVersion, kind, writeUID(a, last))
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if a.Verb == engine.VerbStatus {
		sub = "status"
	}
	var out *unstructured.Unstructured
	if a.Verb == engine.VerbCreate {
		out, err = r.create(ctx, res, body)
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: exists already and was not created by kubectl-mcs; left alone", ref)
		}
	} else {
		if err := r.upgradeOwnership(ctx, res, a, last); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		force := true
		out, err = res.Patch(ctx, a.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: r.opts.FieldManager, Force: &force}, subresources(sub)...)
		if isUIDMismatch(err) {
			return fmt.Errorf("%s: %s: replaced by another object since it was read; deciding again", ref, a.Verb)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", ref, a.Verb, err)
	}
	if o, err := typedAs(a.Kind, out); err == nil {
		m.recent.wrote(a.Kind, o)
	}
	if a.Kind == engine.KindServiceExportStatus {
		r.recordConflictEvent(ctx, m, obs, a)
	}
	return nil
}

// typedAs decodes what an apply returned into the type the engine observes for kind.
func typedAs(kind string, u *unstructured.Unstructured) (metav1.Object, error) {
	switch kind {
	case engine.KindServiceImport:
		return asObject(decode.Unstructured[mcsv1beta1.ServiceImport](u))
	case engine.KindService:
		return asObject(decode.Unstructured[corev1.Service](u))
	case engine.KindEndpointSlice:
		return asObject(decode.Unstructured[discoveryv1.EndpointSlice](u))
	case engine.KindServiceExportStatus:
		return asObject(decode.Unstructured[mcsv1beta1.ServiceExport](u))
	}
	return nil, fmt.Errorf("unknown kind %s", kind)
}

// asObject keeps a failed decode's nil pointer out of the interface.
func asObject[T any, PT interface {
	*T
	metav1.Object
}](o PT, err error) (metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	return o, nil
}

// observedObject is the object a delete action removes, as observed.
func observedObject(obs engine.Observed, a engine.Action) metav1.Object {
	for _, c := range obs.Clusters {
		if c.ID != a.Cluster {
			continue
		}
		var objs []metav1.Object
		switch a.Kind {
		case engine.KindServiceImport:
			objs = asObjects(c.ServiceImports)
		case engine.KindService:
			objs = asObjects(c.Services)
		case engine.KindEndpointSlice:
			objs = asObjects(c.EndpointSlices)
		}
		for _, o := range objs {
			if o.GetNamespace() == a.Namespace && o.GetName() == a.Name {
				return o
			}
		}
	}
	return nil
}

func asObjects[T metav1.Object](in []T) []metav1.Object {
	out := make([]metav1.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}

func subresources(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// ownConditions are the ServiceExport condition types the controller owns; others' stay theirs.
var ownConditions = map[string]bool{
	string(mcsv1beta1.ServiceExportConditionValid):    true,
	string(mcsv1beta1.ServiceExportConditionReady):    true,
	string(mcsv1beta1.ServiceExportConditionConflict): true,
}

// create writes a new object with a plain create, which fails on an existing one: a forced apply
// would silently take over an object of the same name that the cache had not shown yet.
func (r *Reconciler) create(ctx context.Context, res dynamic.ResourceInterface, body []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(body, &u.Object); err != nil {
		return nil, err
	}
	return res.Create(ctx, u, metav1.CreateOptions{FieldManager: r.opts.FieldManager})
}

// upgradeOwnership hands the fields that our create set (owned through an Update operation) to
// our apply manager before the first apply, so that an apply that leaves a field out (a port, a
// label) removes it instead of leaving it co-owned. EndpointSlices need none: every field of
// ours there is a scalar or an atomic list, which an apply replaces whole.
func (r *Reconciler) upgradeOwnership(ctx context.Context, res dynamic.ResourceInterface, a engine.Action, last metav1.Object) error {
	if a.Verb != engine.VerbUpdate || a.Kind == engine.KindEndpointSlice {
		return nil
	}
	o, ok := last.(runtime.Object)
	if !ok {
		return nil
	}
	fm := r.opts.FieldManager
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(o, sets.New(fm), fm)
	if err != nil || patch == nil {
		return err
	}
	r.writes.Add(1)
	if _, err := res.Patch(ctx, a.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("taking over the fields of our create for server-side apply: %w", err)
	}
	return nil
}

// isUIDMismatch reports the apiserver's refusal of a write that names another object's UID: 422
// "metadata.uid: field is immutable" when an object of that name exists, 409 "uid mismatch" when
// none does. Either way the object we decided about is not the one there.
func isUIDMismatch(err error) bool {
	if apierrors.IsConflict(err) {
		return strings.Contains(err.Error(), "uid mismatch")
	}
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// writeUID is the UID the write must find: the object's as we read it.
func writeUID(a engine.Action, last metav1.Object) types.UID {
	switch {
	case a.Verb == engine.VerbCreate:
		return ""
	case last != nil:
		return last.GetUID()
	case a.Object != nil:
		if o, err := meta.Accessor(a.Object); err == nil {
			return o.GetUID()
		}
	}
	return ""
}

// applyBody is the apply configuration of an action: only the fields we own, and the UID the
// object must have (see writeUID; "" for none).
func applyBody(a engine.Action, apiVersion, kind string, uid types.UID) ([]byte, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.Object)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind}
	md, _ := u["metadata"].(map[string]any)
	keep := map[string]any{"name": a.Name, "namespace": a.Namespace}
	if uid != "" {
		keep["uid"] = string(uid)
	}
	if a.Kind != engine.KindServiceExportStatus && a.Verb != engine.VerbStatus {
		for _, f := range []string{"labels", "annotations", "ownerReferences"} {
			if v, ok := md[f]; ok {
				keep[f] = v
			}
		}
	}
	obj["metadata"] = keep
	switch {
	case a.Kind == engine.KindServiceExportStatus:
		conds, _, _ := unstructured.NestedSlice(u, "status", "conditions")
		var mine []any
		for _, c := range conds {
			if t, _ := c.(map[string]any)["type"].(string); ownConditions[t] {
				mine = append(mine, c)
			}
		}
		obj["status"] = map[string]any{"conditions": mine}
	case a.Verb == engine.VerbStatus:
		obj["status"] = u["status"]
	default:
		for k, v := range u {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				obj[k] = v
			}
		}
	}
	return json.Marshal(obj)
}

// recordConflictEvent emits an Event on a ServiceExport whose Conflict condition changes.
func (r *Reconciler) recordConflictEvent(ctx context.Context, m *member, obs engine.Observed, a engine.Action) {
	want, _ := a.Object.(*mcsv1beta1.ServiceExport)
	if want == nil {
		return
	}
	var before *metav1.Condition
	for _, cs := range obs.Clusters {
		if cs.ID != m.ID {
			continue
		}
		for _, se := range cs.ServiceExports {
			before = meta.FindStatusCondition(se.Status.Conditions, string(mcsv1beta1.ServiceExportConditionConflict))
		}
	}
	after := meta.FindStatusCondition(want.Status.Conditions, string(mcsv1beta1.ServiceExportConditionConflict))
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	if before == nil && after.Status != metav1.ConditionTrue {
		return // first decision, no conflict: nothing to tell
	}
	typ, reason := corev1.EventTypeWarning, "ConflictDetected"
	if after.Status != metav1.ConditionTrue {
		typ, reason = corev1.EventTypeNormal, "ConflictResolved"
	}
	now := metav1.NewTime(r.now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: a.Name + ".", Namespace: a.Namespace,
			Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}},
		InvolvedObject: corev1.ObjectReference{APIVersion: mcsapi.Group + "/" + m.version, Kind: mcsv1beta1.ServiceExportKindName,
			Namespace: a.Namespace, Name: a.Name, UID: want.UID},
		Type: typ, Reason: reason, Message: after.Message,
		Source:         corev1.EventSource{Component: names.FieldManager},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := m.Client.CoreV1().Events(a.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		klog.V(2).InfoS("could not record event", "cluster", m.ID, "export", a.Namespace+"/"+a.Name, "err", err)
	}
}

// Conflicts returns every current conflict, sorted.
func (r *Reconciler) Conflicts() []engine.Conflict {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []engine.Conflict{}
	for _, c := range r.conflicts {
		out = append(out, c...)
	}
	slices.SortFunc(out, engine.CompareConflicts)
	return out
}

// Skips returns the objects the engine declined to touch (user-made, same name).
func (r *Reconciler) Skips() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.skips {
		out = append(out, s...)
	}
	sort.Strings(out)
	return out
}

// Changes returns and forgets the writes made so far.
func (r *Reconciler) Changes() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.changes
	r.changes = nil
	return c
}

// Writes counts API writes since start.
func (r *Reconciler) Writes() int64 { return r.writes.Load() }
