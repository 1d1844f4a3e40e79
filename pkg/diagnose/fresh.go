package diagnose

import (
	"fmt"
	"slices"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// checkFreshness: the copies a member holds of each exporting cluster's slices say what those
// slices say, as sync compares them. status made the comparison (its Copies): status and
// diagnose never disagree on it.
func checkFreshness(s *Snapshot, m Cluster, sv service, cs status.ClusterStatus, exporting []string) []Result {
	var out []Result
	for _, c := range cs.Copies {
		if !slices.Contains(exporting, c.Source) {
			continue // copies of a cluster that does not export it: import-slices says so
		}
		obj := fmt.Sprintf("endpointslices/%s/%s from %s", sv.Namespace, sv.Name, c.Source)
		r := Result{Check: CheckFreshness, Cluster: m.ID, Object: obj, Severity: OK}
		switch c.State {
		case status.CopiesUnread:
			r.Message = fmt.Sprintf("not compared: %q cannot be read, and its copies stand as sync last wrote them", c.Source)
		case status.CopiesStale:
			since := c.SinceString()
			if c.Since != nil {
				since += fmt.Sprintf(" (%s ago)", age(s.Now, *c.Since))
			}
			r.Severity = Fail
			r.Message = fmt.Sprintf("the copies of %q's endpoints here are out of date: %s; %s", c.Source, c.Differences(), since)
			r.Fix = "Run sync, which rewrites the copies that differ from their source, or check the sync that runs in the cluster:"
			r.sync = syncPass(sv.Namespace)
		default:
			r.Message = fmt.Sprintf("the copies say what %q's slices say", c.Source)
		}
		out = append(out, r)
	}
	return out
}
