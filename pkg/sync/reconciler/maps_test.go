package reconciler

import (
	"fmt"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// mapSizes is the size of every map sync keeps per service (or per object of a service): after
// churn, each is back to what it was.
func (r *Reconciler) mapSizes() map[string]int {
	r.mu.Lock()
	out := map[string]int{"skips": len(r.skips), "conflicts": len(r.conflicts), "failing": len(r.failing), "pending": len(r.pending)}
	r.mu.Unlock()
	if r.fair != nil {
		r.fair.mu.Lock()
		out["fair queue"] = len(r.fair.served)
		r.fair.mu.Unlock()
	}
	for _, c := range r.clusters {
		out[fmt.Sprintf("recent writes in %s", c.ID())] = c.recent.len()
	}
	out["queue"] = r.queue.Len()
	return out
}

// A service decided without skips keeps no entry in the report's map, nor one whose skips went:
// every service ever decided kept one, and `sync --watch` grew with service churn.
func TestRecordKeepsNothingForAServiceWithoutSkips(t *testing.T) {
	r := testReconciler(nil)
	k := key{Namespace: "demo", Name: "serve"}
	r.record(k, engine.Desired{}, nil)
	if n := r.mapSizes()["skips"]; n != 0 {
		t.Fatalf("a service without skips keeps %d entries", n)
	}
	r.record(k, engine.Desired{}, []string{`cluster "m1": ServiceExport demo/serve: undecodable`})
	if got := r.Skips(); len(got) != 1 {
		t.Fatalf("skips %q", got)
	}
	r.record(k, engine.Desired{}, nil)
	if n := r.mapSizes()["skips"]; n != 0 {
		t.Errorf("a service whose skips went keeps %d entries", n)
	}
}

// A service gone from every member is forgotten by the fair queue at once, not after its quiet
// period.
func TestFairQueueForgetsAServiceGone(t *testing.T) {
	r := testReconciler(nil, oneExporter(t)[1])
	r.fair = newFairQueue(r.now)
	r.queue = queueOver(r.fair)
	r.failing, r.pending = map[key]map[object]failure{}, map[key][]Change{}
	k := key{Namespace: "demo", Name: "gone"}
	r.queue.Add(k)
	got, _ := r.queue.Get()
	if err := r.syncKey(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	r.queue.Done(got)
	if n := r.mapSizes()["fair queue"]; n != 0 {
		t.Errorf("the fair queue remembers %d services after syncing one that no member holds", n)
	}
}
