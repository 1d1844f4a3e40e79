package engine

import (
	"strings"
	"testing"
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
		if acts := Plan(obs, Compute(obs)); len(acts) > 0 {
			t.Fatalf("one sync of the whole clusterset still writes %s after the members' syncs converged:\n%s", summary(acts), strings.Join(history, "\n"))
		}
	})
}
