package reconciler

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// target is one member as sync reads and writes it: its caches and lifecycle (member.Cache),
// what this process wrote there lately, and the schemas it serves.
type target struct {
	*member.Cache
	recent recent  // our writes the informers have not shown yet
	events *events // nil without a client
	// The member's served ServiceImport/ServiceExport schemas (nil: declare everything), set
	// when it joins.
	importSchema, exportSchema engine.Pruner
	// evicted is the start (State.Since) of the outage whose eviction was requeued; evictExpired
	// alone reads and writes it.
	evicted time.Time
}

// newClusters wraps the members; an event decides its service again, a namespace event every
// service in it, a member joining or changing reachability every service.
func (r *Reconciler) newClusters(members []*clusterset.Connection) {
	byMember := map[*member.Cache]*target{}
	var cached func(cluster, kind string, objects, bytes int)
	if r.opts.Metrics != nil {
		cached = r.opts.Metrics.cached
	}
	ms := member.New(members, member.Config{
		Namespace:     r.opts.Namespace,
		ProbeInterval: r.opts.ProbeInterval,
		Now:           r.now,
		FieldManager:  r.opts.FieldManager,
		Cached:        cached,
		Local:         r.opts.Local,
		BeforeStart: func(ctx context.Context, m *member.Cache, v string) error {
			if r.opts.LoadSchemas == nil {
				return nil
			}
			imp, exp, err := r.opts.LoadSchemas(ctx, m.Connection, v)
			if err != nil {
				return fmt.Errorf("reading the served mcs-api schemas: %w", err)
			}
			c := byMember[m]
			c.importSchema, c.exportSchema = engine.Pruning(imp, snapshot.KindServiceImport), engine.Pruning(exp, snapshot.KindServiceExport)
			return nil
		},
		Handlers: member.Handlers{
			Object: func(m *member.Cache, kind string, svc types.NamespacedName, obj any, deleted bool) {
				if o, ok := obj.(metav1.Object); ok {
					switch {
					case deleted:
						byMember[m].recent.gone(kind, o) // before the sync it triggers decides
					case byMember[m].recent.echo(kind, o):
						// Not queued: at a cold start, every write's echo would put its
						// service back at the end of a long queue, for nothing.
						return
					}
				}
				if svc.Name != "" {
					r.queue.Add(svc)
				}
			},
			Namespace: r.namespaceChanged,
			Health:    r.requeueAll,
		},
	})
	for _, m := range ms {
		c := &target{Cache: m}
		if m.Client != nil && !r.opts.DryRun && r.writesIn(c) {
			c.events = newEvents(m.ID, m.Client)
		}
		byMember[m] = c
		r.clusters = append(r.clusters, c)
	}
}

// evictExpired requeues every service when a member has been unreachable past the timeout, so
// that its endpoints leave the other clusters: once per outage (Since), not on every tick, which
// at thousands of services would keep the queue full for as long as the member stays down.
func (r *Reconciler) evictExpired(context.Context) {
	requeue := false
	for _, c := range r.clusters {
		s := c.State()
		if s.Joined && !s.Reachable && !s.Since.IsZero() && r.now().Sub(s.Since) > r.opts.UnreachableTimeout && !c.evicted.Equal(s.Since) {
			klog.V(2).InfoS("member unreachable past the timeout", "cluster", c.ID())
			c.evicted, requeue = s.Since, true
		}
	}
	if requeue {
		r.requeueAll()
	}
}
