package engine

// Former cluster IDs. A member whose cluster ID changed while no sync ran (its ClusterProperty
// rewritten or deleted, then sync restarted) leaves records under its old ID that no process
// remembers: they would stand for good, as an unread cluster's, beside its new ones. So every
// import records, for each cluster its status.clusters names, that cluster's own identity
// (names.SourceClusterUIDsAnnotation, from ObservedCluster.UID), which every sync reads alike,
// per-member ones included: what was recorded under an ID no member has, with a read member's
// identity, is that member's.

import (
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// FormerIDs maps each former cluster ID the imports of obs record to the read member that had it:
// an ID that no member has (obs.Members; nil: none is known to be former), not read nor evicted,
// which every managed import recording it records with the UID of one same read cluster, a UID
// no other read cluster has (two contexts of one cluster: whose it was is unknown). A member not
// read, or whose UID is unknown, has no former ID. Its records stand until the caller evicts it
// (Observed.Evicted), once the records under the present ID are there.
func FormerIDs(obs Observed) map[string]string {
	return newMembership(obs).former
}

// formerIDs computes FormerIDs for m, whose read, evicted, members and uids are set.
func (m membership) formerIDs(obs Observed) map[string]string {
	if m.members == nil || len(m.uids) == 0 {
		return nil
	}
	byUID := map[string]string{} // UID -> the read cluster that has it, "" when several do
	for id, uid := range m.uids {
		if _, dup := byUID[uid]; dup {
			byUID[uid] = ""
			continue
		}
		byUID[uid] = id
	}
	out, unsure := map[string]string{}, map[string]bool{}
	for _, c := range obs.Clusters {
		for _, si := range c.ServiceImports {
			if !names.IsManaged(si.Labels) {
				continue
			}
			for id, uid := range recordedUIDs(si.Annotations) {
				if m.members[id] || !m.unread(id) {
					continue
				}
				now := byUID[uid]
				if prev, seen := out[id]; now == "" || seen && prev != now {
					unsure[id] = true
				}
				out[id] = now
			}
		}
	}
	for id := range unsure {
		delete(out, id)
	}
	return out
}

// recordedUIDs are the cluster identities an import's annotations record, by cluster ID.
func recordedUIDs(annotations map[string]string) map[string]string {
	v := annotations[names.SourceClusterUIDsAnnotation]
	if v == "" {
		return nil
	}
	out := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		if id, uid, ok := strings.Cut(part, "="); ok && id != "" && uid != "" {
			out[id] = uid
		}
	}
	return out
}

// sourceUIDs is the SourceClusterUIDsAnnotation of ci's import of k naming ids (sorted): a read
// cluster's own identity, an unread one's as that import recorded it; "" when none is known.
func (m membership) sourceUIDs(ci *clusterIndex, k key, ids []string) string {
	var recorded map[string]string
	if imp := ci.ix.Imports[k]; imp != nil {
		recorded = recordedUIDs(imp.Annotations)
	}
	var parts []string
	for _, id := range ids {
		uid := m.uids[id]
		if !m.read[id] {
			uid = recorded[id]
		}
		if uid != "" {
			parts = append(parts, id+"="+uid)
		}
	}
	return strings.Join(parts, ",")
}
