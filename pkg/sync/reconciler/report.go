package reconciler

// Reports: conflicts, skipped objects, changes and events, for the commands and the users.

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// record keeps the conflicts and skipped objects of one service for the reports.
func (r *Reconciler) record(k key, want engine.Desired, problems []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nConflicts += len(want.Conflicts) - len(r.conflicts[k])
	if len(want.Conflicts) > 0 {
		r.conflicts[k] = want.Conflicts
	} else {
		delete(r.conflicts, k)
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
				skips = append(skips, fmt.Sprintf("cluster %q: %s %s/%s: its source cluster %q is not in the clusterset (--contexts); left alone",
					id, h.Kind, h.Namespace, h.Name, h.Source))
			}
		}
	}
	// A service without skips has no entry: every service ever decided would otherwise keep one.
	if len(skips) > 0 {
		sort.Strings(skips)
		r.skips[k] = skips
	} else {
		delete(r.skips, k)
	}
}

// recordChanges keeps the writes of service k: for a pass's report, or in watch mode until its
// sync ends (tellChanges), so that a watch keeps none for longer than one sync.
func (r *Reconciler) recordChanges(k key, actions []engine.Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range actions {
		c := Change{Cluster: a.Cluster, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name, Action: a.Verb, Service: k.Name}
		if r.watching {
			if r.opts.OnChanges != nil {
				r.pending[k] = append(r.pending[k], c)
			}
			continue
		}
		r.changes = append(r.changes, c)
	}
}

// tellChanges hands the writes of k's sync, now ended, to OnChanges.
func (r *Reconciler) tellChanges(k key) {
	r.mu.Lock()
	cs := r.pending[k]
	delete(r.pending, k)
	r.mu.Unlock()
	if len(cs) > 0 && r.opts.OnChanges != nil {
		r.opts.OnChanges(sortChanges(cs))
	}
}

// recordConflictEvent emits an Event on a ServiceExport whose Conflict condition changes.
func (r *Reconciler) recordConflictEvent(m *target, obs engine.Observed, a engine.Action) {
	want, _ := a.Object.(*mcsv1beta1.ServiceExport)
	if want == nil {
		return
	}
	var before *metav1.Condition
	for _, cs := range obs.Clusters {
		if cs.ID != m.ID() {
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
	if m.events == nil {
		return
	}
	m.events.Eventf(&corev1.ObjectReference{APIVersion: mcsapi.Group + "/" + m.State().Version, Kind: mcsv1beta1.ServiceExportKindName,
		Namespace: a.Namespace, Name: a.Name, UID: want.UID}, typ, reason, "%s", after.Message)
	klog.V(2).InfoS("event", "cluster", m.ID(), "export", a.Namespace+"/"+a.Name, "reason", reason)
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

// Changes returns and forgets the writes made so far, in the order of a plan (cluster, kind,
// object): the clusters' pipelines record theirs as they go. One object's writes keep their order.
func (r *Reconciler) Changes() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.changes
	r.changes = nil
	return sortChanges(c)
}

// sortChanges puts changes in the order of a plan (cluster, kind, object), one object's in the
// order they were made.
func sortChanges(c []Change) []Change {
	object := func(c Change) engine.Action {
		return engine.Action{Cluster: c.Cluster, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name}
	}
	sort.SliceStable(c, func(i, j int) bool { return engine.ObjectLess(object(c[i]), object(c[j])) })
	return c
}

// Writes counts API writes since start.
func (r *Reconciler) Writes() int64 { return r.writes.Load() }
