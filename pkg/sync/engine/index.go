package engine

// The index of what was observed, and which clusters and services a computation covers.

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

type key = types.NamespacedName

// clusterIndex is one cluster's objects by namespace/name, as the engine reads them: exports
// without the terminating ones (already unexported as far as consumers are concerned), and
// copies that are ours only.
type clusterIndex struct {
	*ObservedCluster
	ix      *snapshot.Index
	exports map[key]*mcsv1beta1.ServiceExport
	copies  map[key][]*discoveryv1.EndpointSlice
	now     metav1.Time    // Observed.Now
	failing []WriteFailure // the writes in this cluster that keep failing (Observed.Failing)
}

func indexClusters(obs Observed) []*clusterIndex {
	out := make([]*clusterIndex, 0, len(obs.Clusters))
	for i := range obs.Clusters {
		c := &obs.Clusters[i]
		ix := snapshot.NewIndex(&c.Objects)
		ci := &clusterIndex{ObservedCluster: c, ix: ix, exports: maps.Clone(ix.Exports), copies: map[key][]*discoveryv1.EndpointSlice{}, now: obs.Now}
		for _, f := range obs.Failing {
			if f.Cluster == c.ID {
				ci.failing = append(ci.failing, f)
			}
		}
		for k, o := range ix.Exports {
			if o.DeletionTimestamp != nil {
				delete(ci.exports, k)
			}
		}
		for k, l := range ix.Copies {
			if ours := slices.DeleteFunc(slices.Clone(l), func(s *discoveryv1.EndpointSlice) bool { return !names.IsManaged(s.Labels) }); len(ours) > 0 {
				ci.copies[k] = ours
			}
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// membership says, for a source cluster ID, whether what the clusterset recorded about it
// stands: it does for every cluster that was not read, unless it was evicted.
type membership struct {
	read, evicted, members map[string]bool
	uids                   map[string]string // the read clusters' identities (ObservedCluster.UID)
	former                 map[string]string // FormerIDs
}

func newMembership(obs Observed) membership {
	m := membership{read: map[string]bool{}, evicted: map[string]bool{}, uids: map[string]string{}}
	for _, c := range obs.Clusters {
		m.read[c.ID] = true
		if c.UID != "" {
			m.uids[c.ID] = c.UID
		}
	}
	for _, id := range obs.Evicted {
		m.evicted[id] = true
	}
	if obs.Members != nil {
		m.members = map[string]bool{}
		for _, id := range obs.Members {
			m.members[id] = true
		}
	}
	m.former = m.formerIDs(obs)
	return m
}

func (m membership) unread(id string) bool { return id != "" && !m.read[id] && !m.evicted[id] }

// outside says whether id is no member's, now or formerly.
func (m membership) outside(id string) bool {
	return m.members != nil && !m.members[id] && m.former[id] == ""
}

// heldSources are the unread source clusters that ci's own records of k name, sorted.
func (m membership) heldSources(ci *clusterIndex, k key) []string {
	set := map[string]bool{}
	for id := range recordedSources(ci, k) {
		if m.unread(id) {
			set[id] = true
		}
	}
	return sortedKeys(set)
}

// recordedSources are the source clusters ci's own records of k name: its import's
// status.clusters and its copies' source-cluster labels.
func recordedSources(ci *clusterIndex, k key) map[string]bool {
	set := map[string]bool{}
	if imp := ci.ix.Imports[k]; imp != nil && names.IsManaged(imp.Labels) {
		for _, c := range imp.Status.Clusters {
			if c.Cluster != "" {
				set[c.Cluster] = true
			}
		}
	}
	for _, s := range ci.copies[k] {
		if src := s.Labels[mcsv1beta1.LabelSourceCluster]; src != "" {
			set[src] = true
		}
	}
	return set
}

func sortedKeys(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }

// exportedKeys are the services some cluster exports, sorted by namespace then name.
func exportedKeys(idx []*clusterIndex) []key {
	keySet := map[key]bool{}
	for _, ci := range idx {
		for k := range ci.exports {
			keySet[k] = true
		}
	}
	return sortKeys(keySet)
}

// sortKeys orders services by namespace, then name.
func sortKeys(keySet map[key]bool) []key {
	return slices.SortedFunc(maps.Keys(keySet), func(a, b key) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
}

// decidedKeys are the services obs decides: its scope when set, else every service exported or
// still recorded by an import or slice of ours.
func decidedKeys(obs Observed, idx []*clusterIndex) []key {
	keySet := map[key]bool{}
	if obs.Services != nil {
		for _, k := range obs.Services {
			keySet[k] = true
		}
		return sortKeys(keySet)
	}
	for _, ci := range idx {
		for k := range ci.exports {
			keySet[k] = true
		}
		for k, imp := range ci.ix.Imports {
			if names.IsManaged(imp.Labels) {
				keySet[k] = true
			}
		}
		for k := range ci.copies {
			keySet[k] = true
		}
	}
	return sortKeys(keySet)
}

// inScope reports whether obs decides service k.
func inScope(obs Observed, k key) bool {
	if obs.Services == nil {
		return true
	}
	for _, s := range obs.Services {
		if s == k {
			return true
		}
	}
	return false
}

func findCluster(idx []*clusterIndex, id string) *clusterIndex {
	i := sort.Search(len(idx), func(i int) bool { return idx[i].ID >= id })
	return idx[i]
}
