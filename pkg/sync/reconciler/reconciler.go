// Package reconciler is the thin layer between the pure engine (pkg/sync/engine) and the member
// clusters: informers in, server-side apply of the engine's plan out.
package reconciler

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
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
	// Local, when set, is the context of the one member this sync acts for (sync --local): every
	// member is read, and only Local is written (its imports, derived Services and copies, the
	// status and Events of its own exports). What each decides for its own member is what one
	// sync of the whole clusterset decides for it (engine.Observed.For), so the members' syncs need
	// no coordination.
	Local string
	// OnChanges, in watch mode, is told the writes of each sync of a service that made any, once
	// it ends, in the order of a plan (sync --watch prints them). Called from the workers: one
	// service at a time, several services at once.
	OnChanges func([]Change)
}

// SchemaLoader reads the served ServiceImport and ServiceExport schemas of mcs-api version v.
type SchemaLoader func(ctx context.Context, m *clusterset.Connection, v string) (imp, exp engine.Pruner, err error)

// Change is one write the reconciler made (or would make, under dry run). Service is the
// multi-cluster service (in Namespace) the object belongs to, by which a report tells it in a
// line that a derived object's long name would not fit.
type Change struct {
	Cluster, Kind, Namespace, Name, Action string
	Service                                string
}

// key is a service: the queue's item, and what one sync decides.
type key = types.NamespacedName

// Reconciler keeps the clusterset in sync.
type Reconciler struct {
	opts     Options
	clusters []*target
	queue    workqueue.TypedRateLimitingInterface[key]
	fair     *fairQueue // queue's order: forgets a service once it is gone
	writes   atomic.Int64

	mu         sync.Mutex
	conflicts  map[key][]engine.Conflict
	nConflicts int // total of conflicts, for the metric without walking them
	skips      map[key][]string
	failing    map[key]map[object]failure // the writes that failed in each service's last sync
	nFailing   int
	changes    []Change
	watching   bool // Run: no pass report; each sync's changes go to OnChanges
	pending    map[key][]Change
	lastSync   time.Time // when a service's sync last ended (View)
	now        func() time.Time
}

// New prepares a reconciler over the members; unreachable ones are kept as such.
func New(members []*clusterset.Connection, opts Options) *Reconciler {
	if opts.FieldManager == "" {
		opts.FieldManager = names.FieldManager
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = time.Second
	}
	r := &Reconciler{
		opts:      opts,
		conflicts: map[key][]engine.Conflict{},
		skips:     map[key][]string{},
		failing:   map[key]map[object]failure{},
		pending:   map[key][]Change{},
		now:       time.Now,
	}
	r.fair = newFairQueue(time.Now)
	r.queue = queueOver(r.fair)
	r.newClusters(members)
	return r
}

// Start joins every member in the background: each is retried with backoff until it answers
// and its caches sync, however late (pkg/member).
func (r *Reconciler) Start(ctx context.Context) {
	for _, c := range r.clusters {
		go c.Run(ctx)
	}
}

// WaitForSync waits until every member has joined, or failed to (it is down, or has no CRDs),
// or the timeout. Members that have not joined are not read: their recorded exports stand, and
// they join when they can.
func (r *Reconciler) WaitForSync(ctx context.Context, timeout time.Duration) {
	ms := make([]*member.Cache, len(r.clusters))
	for i, c := range r.clusters {
		ms[i] = c.Cache
	}
	member.Wait(ctx, ms, timeout)
}

// Unreachable lists the members that cannot be read now, with why.
func (r *Reconciler) Unreachable() map[string]string {
	out := map[string]string{}
	for _, c := range r.clusters {
		if why := c.State().Unreachable(); why != "" {
			out[c.ID()] = why
		}
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

// namespaceChanged: a namespace appeared or went, so every service in it may import there now.
// Found by namespace index: at start-up every namespace arrives as an event.
func (r *Reconciler) namespaceChanged(ns string) {
	for _, k := range r.keysIn(ns) {
		r.queue.Add(k)
	}
}

func (r *Reconciler) allKeys() []key { return r.keysIn("") }

// keysIn is every service that some member knows in namespace ns ("": all), sorted.
func (r *Reconciler) keysIn(ns string) []key {
	seen := map[key]bool{}
	for _, c := range r.clusters {
		if !c.State().Joined {
			continue
		}
		for _, k := range c.Keys(ns) {
			seen[k] = true
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b key) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
}

// SyncAll reconciles every known service until nothing is left to do (or maxPasses): the one-shot
// `kubectl mcs sync`. Later passes pick up what the apiservers filled in, such as the derived
// Service's cluster IP that the ServiceImport must carry.
func (r *Reconciler) SyncAll(ctx context.Context) error {
	defer r.flushEvents(ctx)
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

// flushEvents waits, briefly (5 s in all, however many members), for the events recorded to be
// written.
func (r *Reconciler) flushEvents(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, c := range r.clusters {
		if c.events != nil {
			c.events.flush(ctx)
		}
	}
}

// Run processes the queue until ctx ends: the `--watch` loop.
func (r *Reconciler) Run(ctx context.Context, workers int) {
	defer r.queue.ShutDown()
	r.mu.Lock()
	r.watching = true
	r.mu.Unlock()
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

// syncKey decides and applies one service.
func (r *Reconciler) syncKey(ctx context.Context, k key) error {
	start := time.Now()
	ns, name := k.Namespace, k.Name
	// Rounds: each applies, in every cluster at once, only the first kind of work the plan has for
	// it, then decides again from what the writes returned. Dependents are thus written once,
	// complete: owner references carry the owner's UID, the import the derived Service's IP, the
	// export's Ready condition the imports just made. When more than one cluster has work of its
	// own, the clusters' pipelines do it first. A write that fails waits for the next sync, with its
	// cluster's later writes; the other clusters' go on, and the exports tell of it once it keeps failing (failures.go).
	var errs []string
	fs := r.syncFailures(k)
	for round := 0; ; round++ {
		obs, problems := r.observe(ns, name)
		obs.Failing = fs.told()
		want := engine.Compute(obs)
		actions := engine.Plan(obs, want)
		if fs.settle(actions) {
			obs.Failing = fs.told()
			want = engine.Compute(obs)
			actions = engine.Plan(obs, want)
		}
		actions = fs.without(actions)
		r.record(k, want, problems)
		if len(actions) == 0 {
			if gone(obs) {
				r.fair.forget(k)
			}
			break
		}
		if own := ownWork(actions); round == 0 && len(own) > 1 && !r.opts.DryRun {
			r.pipelines(ctx, fs, ns, name, obs, own)
			continue
		}
		if round == maxRounds {
			// Unusual churn, or an apiserver that drops what we write: back off, never spin.
			errs = append(errs, fmt.Sprintf("service %s still wants writes after %d rounds (first: %s %s %s/%s in %q); retrying with backoff",
				k, maxRounds, actions[0].Verb, actions[0].Kind, actions[0].Namespace, actions[0].Name, actions[0].Cluster))
			break
		}
		if r.opts.DryRun {
			r.recordChanges(k, actions)
			break
		}
		r.runRound(ctx, fs, obs, firstKindPerCluster(actions))
	}
	r.keepFailing(fs)
	r.tellChanges(k)
	r.synced(r.now())
	if m := r.opts.Metrics; m != nil {
		m.SyncLatency.Observe(time.Since(start).Seconds())
	}
	if errs = append(fs.errors(), errs...); len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// maxRounds bounds the rounds of one sync of a service (and of each cluster's pipeline).
const maxRounds = 8

// pipelines lets each cluster work through its own part of the plan at its own pace, before the
// rounds above: a round waits for the slowest cluster, and on a busy clusterset every cluster is
// in turn the slowest one. An export's status is left to the rounds: its Ready condition waits
// for the imports of every cluster, and written early it would be written twice. first is each
// cluster's first work, decided from obs. A cluster whose write fails stops here; the rounds
// carry on without that object. So does one that has written its slices (lastPipelineKind):
// deciding again here would only find what the next round decides anyway, for every cluster at
// once (an endpoint change, slices alone in every cluster, is then decided twice, not once more
// per cluster).
func (r *Reconciler) pipelines(ctx context.Context, fs *syncFailures, ns, name string, obs engine.Observed, first map[string][]engine.Action) {
	var wg sync.WaitGroup
	for cl, actions := range first {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := obs
			for round := 0; round < maxRounds; round++ {
				if round > 0 {
					seen, _ = r.observe(ns, name)
					seen.Failing, seen.For = fs.told(), cl
					if actions = fs.without(ownWork(engine.Plan(seen, engine.Compute(seen)))[cl]); len(actions) == 0 {
						return
					}
				}
				if len(r.runRound(ctx, fs, seen, [][]engine.Action{actions})) > 0 || actions[0].Kind == lastPipelineKind {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// lastPipelineKind is the last kind a pipeline writes: the plan's order ends with the export's
// status, which ownWork leaves to the rounds.
const lastPipelineKind = snapshot.KindEndpointSlice

// ownWork is, per cluster, the actions of the earliest kind it has, unless that kind is the
// export status (see pipelines).
func ownWork(actions []engine.Action) map[string][]engine.Action {
	out := map[string][]engine.Action{}
	for _, kind := range firstKindPerCluster(actions) {
		if kind[0].Kind != snapshot.KindServiceExport {
			out[kind[0].Cluster] = kind
		}
	}
	return out
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

// writesIn says whether this sync may write in c: every member, or under Local that one alone.
func (r *Reconciler) writesIn(c *target) bool {
	return r.opts.Local == "" || c.Context == r.opts.Local
}

func (r *Reconciler) cluster(id string) *target {
	for _, c := range r.clusters {
		if c.ID() == id {
			return c
		}
	}
	return nil
}
