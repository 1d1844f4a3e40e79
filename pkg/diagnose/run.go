package diagnose

import (
	"sort"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// Run runs every check over the snapshot and returns the report, results sorted by check (in
// Order), cluster and object.
func Run(s *Snapshot) *Report {
	clusters := make([]snapshot.Cluster, len(s.Clusters))
	objs := make([]*objects, len(s.Clusters))
	for i := range s.Clusters {
		clusters[i] = s.Clusters[i].Cluster
		objs[i] = objectsOf(&s.Clusters[i].Cluster)
	}
	l := status.Build(clusters)
	var svcs []service
	for i := range l.Items {
		it := &l.Items[i]
		if s.Service != "" && it.Name != s.Service {
			continue
		}
		svcs = append(svcs, service{key: key{Namespace: it.Namespace, Name: it.Name}, item: it})
	}
	var results []Result
	for _, f := range []func(*Snapshot) []Result{checkSync, checkReachable, checkCRDs, checkClusterIDs, checkRBAC, checkClock, checkDNS, checkKarmada} {
		results = append(results, f(s)...)
	}
	results = append(results, checkExports(s, svcs, objs)...)
	results = append(results, checkImports(s, svcs, objs)...)
	results = append(results, checkTraffic(svcs)...)
	results = append(results, checkKarmadaPlacement(s, objs)...)
	noSyncWarns(results)
	syncs := status.Syncs(clusters, s.Now) // read once for every fix that runs sync
	for i := range results {
		if x := &results[i]; x.sync != nil {
			x.Commands = append(x.Commands, syncCommand(s, *x.sync))
			withInstalledSync(s, syncs, x)
		}
	}
	r := NewReport(l.Clusters, results)
	r.Missing = s.Service != "" && len(svcs) == 0
	return r
}

// NewReport sorts the results and counts them.
func NewReport(clusters []status.ClusterInfo, results []Result) *Report {
	rank := map[string]int{}
	for i, c := range Order {
		rank[c] = i
	}
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.Check != b.Check {
			return rank[a.Check] < rank[b.Check]
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		return a.Object < b.Object
	})
	r := &Report{Clusters: clusters, Results: results}
	if r.Results == nil {
		r.Results = []Result{}
	}
	r.APIVersion, r.Kind = APIVersion, KindReport
	for _, x := range results {
		switch x.Severity {
		case Fail:
			r.Summary.Failed++
		case Warn:
			r.Summary.Warnings++
		default:
			r.Summary.Passed++
		}
	}
	return r
}
