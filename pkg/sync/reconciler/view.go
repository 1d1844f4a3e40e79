package reconciler

// The view a running sync publishes of itself (snapshot.SyncView, on the Lease it renews): the
// members it reaches, the writes that keep failing, and when it last decided.

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// maxFailingNamed bounds the failing writes a view names: the annotation rides every renewal.
const maxFailingNamed = 5

// View is what this sync sees now.
func (r *Reconciler) View() snapshot.SyncView {
	var v snapshot.SyncView
	for _, c := range r.clusters {
		st := c.State()
		m := snapshot.SyncViewedMember{Cluster: c.ID(), State: snapshot.Reachable}
		switch {
		case !st.Joined:
			m.State, m.Message = snapshot.Joining, st.Unreachable()
		case !st.Reachable:
			m.State, m.Message = snapshot.Unreachable, st.Unreachable()
		}
		if r.opts.Local != "" && r.writesIn(c) {
			v.Local = m.Cluster
		}
		v.Members = append(v.Members, m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v.FailingWrites, v.Synced, v.LastSync = r.nFailing, r.watching, r.lastSync
	for _, fs := range r.failing {
		for o, f := range fs {
			v.Failing = append(v.Failing, fmt.Sprintf("cluster %q: %s %s/%s: %s", o.cluster, o.kind, o.namespace, o.name, f.message))
		}
	}
	slices.Sort(v.Failing)
	if len(v.Failing) > maxFailingNamed {
		v.Failing = v.Failing[:maxFailingNamed]
	}
	return v
}

// synced records the end of a service's sync, for the view.
func (r *Reconciler) synced(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSync = at
}
