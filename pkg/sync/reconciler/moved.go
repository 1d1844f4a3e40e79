package reconciler

// A member known by another cluster ID than before moves what the clusterset recorded under the
// old ID: the copies of its endpoints and its entry in the imports' status.clusters. The old ID is
// known two ways: this process knew the member by it (its ClusterProperty, read as it joined, says
// otherwise than --contexts, or than when sync connected), or the imports record the member's
// identity under it (engine.FormerIDs: the ID changed while no sync ran).

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// moved are the former IDs of joined members whose records in obs may go: those no member has
// now, once the copies under the member's present ID are written (a plan with the old records
// held writes none of them). Until then the old records stand, as any unread cluster's, so that a
// consumer is never left without the member's endpoints in between.
func (r *Reconciler) moved(obs engine.Observed) []string {
	now := engine.FormerIDs(obs) // former ID -> the member's present ID
	if now == nil {
		now = map[string]string{}
	}
	for _, c := range r.clusters {
		if !c.State().Joined {
			continue
		}
		id := c.ID()
		for _, f := range c.FormerIDs() {
			if !slices.Contains(obs.Members, f) && recorded(obs, f) {
				now[f] = id
			}
		}
	}
	if len(now) == 0 {
		return nil
	}
	pending := map[string]bool{} // present IDs whose copies are still to be written
	for _, a := range engine.Plan(obs, engine.Compute(obs)) {
		if s, ok := a.Object.(*discoveryv1.EndpointSlice); ok && a.Verb != engine.VerbDelete {
			pending[s.Labels[mcsv1beta1.LabelSourceCluster]] = true
		}
	}
	var out []string
	for f, id := range now {
		if !pending[id] {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// recorded says whether some read cluster holds a record of ours naming source cluster id.
func recorded(obs engine.Observed, id string) bool {
	for _, c := range obs.Clusters {
		for _, s := range c.EndpointSlices {
			if s.Labels[mcsv1beta1.LabelSourceCluster] == id && names.IsManaged(s.Labels) {
				return true
			}
		}
		for _, si := range c.ServiceImports {
			if !names.IsManaged(si.Labels) {
				continue
			}
			for _, st := range si.Status.Clusters {
				if st.Cluster == id {
					return true
				}
			}
		}
	}
	return false
}
