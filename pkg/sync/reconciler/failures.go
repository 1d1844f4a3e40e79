package reconciler

// Writes that keep failing: remembered per service from one sync to the next, told to the engine
// (the exports' Ready condition says so), counted in the metrics, and never a reason to stop the
// service's writes in the other clusters.

import (
	"errors"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// object is what a write is about.
type object struct{ cluster, kind, namespace, name string }

func objectOf(a engine.Action) object { return object{a.Cluster, a.Kind, a.Namespace, a.Name} }

// failed is a write that returned an error.
type failed struct {
	action engine.Action
	err    error
}

// failure is an object whose last write failed.
type failure struct {
	message string // the apiserver's answer
	// told: the exports say so. At once when the apiserver refused what was sent (sending it again
	// cannot succeed), else once it failed in two syncs in a row (not a passing conflict).
	told bool
}

// maxMessage bounds the apiserver's answer in a condition message.
const maxMessage = 512

// refused: the apiserver judged the write itself (invalid, denied by a webhook or by RBAC, too
// large), so the same write fails again.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsMethodNotSupported(err) ||
		apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err)
}

// answer is the apiserver's message when there is one, else the whole error.
func answer(err error) string {
	msg := err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		msg = st.Status().Message
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return msg
}

// syncFailures are the failures of one sync of a service: those of the sync before (prev), and
// those of this one (now), whose objects are not written again in this sync.
type syncFailures struct {
	k        key
	mu       sync.Mutex
	prev     map[object]failure
	now      map[object]failure
	messages []string // the errors of this sync, for its caller
}

func (r *Reconciler) syncFailures(k key) *syncFailures {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := map[object]failure{}
	for o, f := range r.failing[k] {
		prev[o] = f
	}
	return &syncFailures{k: k, prev: prev, now: map[object]failure{}}
}

// told is what the engine is told: this sync's failures that qualify, and the last sync's told
// ones that were not written since.
func (s *syncFailures) told() []engine.WriteFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []engine.WriteFailure
	add := func(o object, f failure) {
		out = append(out, engine.WriteFailure{Service: s.k, Cluster: o.cluster, Kind: o.kind, Namespace: o.namespace, Name: o.name, Message: f.message})
	}
	for o, f := range s.now {
		if f.told {
			add(o, f)
		}
	}
	for o, f := range s.prev {
		if _, again := s.now[o]; !again && f.told {
			add(o, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Cluster+out[i].Kind+out[i].Name < out[j].Cluster+out[j].Kind+out[j].Name
	})
	return out
}

// settle forgets the last sync's failures whose object the plan no longer writes: nothing is
// left to fail. It reports whether it forgot one that was told.
func (s *syncFailures) settle(plan []engine.Action) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	planned := map[object]bool{}
	for _, a := range plan {
		planned[objectOf(a)] = true
	}
	changed := false
	for o, f := range s.prev {
		if !planned[o] {
			delete(s.prev, o)
			changed = changed || f.told
		}
	}
	return changed
}

// without leaves out the writes of the clusters where a write failed in this sync: they wait for
// the next one, and the service's writes in the other clusters go on.
func (s *syncFailures) without(plan []engine.Action) []engine.Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A cluster with a failed write does nothing more in this sync: its later writes may depend
	// on the failed one (a slice on the Service it would have replaced), and the next sync decides
	// again from what the cluster then holds. The other clusters go on. A ServiceImport's status
	// depends on no other write and tells of the failure (its Ready: IPFamilyNotSupported when the
	// derived Service is refused for its family): it is written unless it failed itself.
	failedIn := map[string]bool{}
	for o := range s.now {
		failedIn[o.cluster] = true
	}
	out := plan[:0:0]
	for _, a := range plan {
		_, itFailed := s.now[objectOf(a)]
		if !failedIn[a.Cluster] || a.Kind == snapshot.KindServiceImport && a.Verb == engine.VerbStatus && !itFailed {
			out = append(out, a)
		}
	}
	return out
}

// add takes the outcome of writes: attempted were sent, fs failed.
func (s *syncFailures) add(attempted []engine.Action, fs []failed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bad := map[object]bool{}
	for _, f := range fs {
		o := objectOf(f.action)
		bad[o] = true
		_, before := s.prev[o]
		s.now[o] = failure{message: answer(f.err), told: refused(f.err) || before}
		s.messages = append(s.messages, f.err.Error())
	}
	for _, a := range attempted {
		if o := objectOf(a); !bad[o] {
			delete(s.prev, o) // written: no longer failing
		}
	}
}

// errors are this sync's failed writes, sorted.
func (s *syncFailures) errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.messages...)
	sort.Strings(out)
	return out
}

// keepFailing records what failed in this sync for the next one; what did not fail again is
// forgotten.
func (r *Reconciler) keepFailing(s *syncFailures) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing == nil {
		r.failing = map[key]map[object]failure{}
	}
	r.nFailing += len(s.now) - len(r.failing[s.k])
	if len(s.now) > 0 {
		r.failing[s.k] = s.now
	} else {
		delete(r.failing, s.k)
	}
	if m := r.opts.Metrics; m != nil {
		m.FailingWrites.Set(float64(r.nFailing))
	}
}

// countFailures counts failed writes in the metrics.
func (r *Reconciler) countFailures(fs []failed) {
	if m := r.opts.Metrics; m != nil {
		for _, f := range fs {
			m.WriteFailures.WithLabelValues(f.action.Cluster, f.action.Kind).Inc()
		}
	}
}
