package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// FuzzConvergeLocal: one sync in every member (sync --local), each deciding for its own member
// alone (Observed.For) from what every member holds, and writing only there, in turns that
// start with another member each round. With no coordination they must converge, and to a
// clusterset that one sync of it all leaves as it is.
func FuzzConvergeLocal(f *testing.F) {
	for _, seed := range convergeSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		failing := map[string][]WriteFailure{} // each member's sync knows its own
		servers, history := converging(t, b, func(round int, servers []*fakeServer, byID map[string]*fakeServer, history []string) []string {
			var wrote []string
			for i := range servers {
				s := servers[(round+i)%len(servers)]
				obs := observeAll(servers, failing[s.id])
				obs.For = s.id
				acts := Plan(obs, Compute(obs))
				for _, a := range acts {
					if a.Cluster != s.id {
						t.Fatalf("round %d: the sync of %q planned %s %s %s/%s in %q", round, s.id, a.Verb, a.Kind, a.Namespace, a.Name, a.Cluster)
					}
				}
				var w []string
				w, failing[s.id] = writePlan(t, byID, acts, round, history)
				wrote = append(wrote, w...)
			}
			return wrote
		})
		var all []WriteFailure
		for _, s := range servers {
			all = append(all, failing[s.id]...)
		}
		obs := observeAll(servers, all)
		if acts := withoutFailing(Plan(obs, Compute(obs)), all); len(acts) > 0 {
			t.Fatalf("one sync of the whole clusterset still writes %s after the members' syncs converged:\n%s", summary(acts), strings.Join(history, "\n"))
		}
	})
}

// withoutFailing leaves out of a plan what a clusterset-wide sync would differ in by design when
// writes keep failing: the failing writes themselves (a sync does not retry them in the same
// pass), and the status of exports whose service has one, since an export's Ready names the
// failing writes its own member's sync knows of, and one sync of the clusterset knows them all.
func withoutFailing(acts []Action, failing []WriteFailure) []Action {
	var out []Action
	for _, a := range acts {
		if !slices.ContainsFunc(failing, func(f WriteFailure) bool {
			return f.Cluster == a.Cluster && f.Kind == a.Kind && f.Namespace == a.Namespace && f.Name == a.Name ||
				a.Kind == snapshot.KindServiceExport && f.Service == serviceOf(a)
		}) {
			out = append(out, a)
		}
	}
	return out
}
