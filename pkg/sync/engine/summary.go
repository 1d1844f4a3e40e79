package engine

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// Summary is the clusterset-wide view of one exported service as Compute decides it (same
// constituents, same merge, same conflicts), without building any per-cluster object. It is what
// `kubectl mcs status` reports, so status and sync can never disagree about a conflict.
type Summary struct {
	Namespace, Name string
	// Exporting are the clusters whose export is a constituent, oldest export first (the first
	// one wins every conflict).
	Exporting []string
	// Invalid are the exports that are not part of the service (no Service, ExternalName), by
	// cluster ID.
	Invalid []InvalidExport
	// Type and Ports are what the ServiceImport says; empty when no export is valid.
	Type  mcsv1beta1.ServiceImportType
	Ports []mcsv1beta1.ServicePort
	// Conflicts is sorted by reason.
	Conflicts []Conflict
	// ZoneHints is how the copies carry the service's trafficDistribution, decided from the
	// constituents' EndpointSlices (obs must hold them); nil when it asks for no hints.
	ZoneHints *ZoneHints
}

// InvalidExport is an export whose Valid condition Compute sets to False.
type InvalidExport struct {
	Cluster string
	Reason  string // ServiceExportReasonNoService or ServiceExportReasonInvalidServiceType
	Message string
}

// Summarize returns one Summary per exported service (a ServiceExport that is not terminating in
// some cluster of obs), sorted by namespace and name. Reachability does not matter here: every
// cluster in obs is a source, exactly as in Compute.
func Summarize(obs Observed) []Summary {
	idx := indexClusters(obs)
	keys := exportedKeys(idx)
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		s := Summary{Namespace: k.Namespace, Name: k.Name}
		var cons []constituent
		for _, ci := range idx {
			exp := ci.exports[k]
			if exp == nil {
				continue
			}
			if reason, msg := exportInvalid(k, ci.ix.Services[k]); reason != "" {
				s.Invalid = append(s.Invalid, InvalidExport{Cluster: ci.ID, Reason: reason, Message: msg})
				continue
			}
			cons = append(cons, constituent{cluster: ci.ID, export: exp, svc: ci.ix.Services[k]})
		}
		if len(cons) > 0 {
			sortConstituents(cons)
			m := mergeConstituents(k.Namespace, k.Name, cons)
			for _, c := range cons {
				s.Exporting = append(s.Exporting, c.cluster)
			}
			s.Type, s.Ports, s.Conflicts = m.typ, m.ports, m.conflicts
			s.ZoneHints = zoneHintsOf(idx, k, m.td, cons, m.union)
		}
		out = append(out, s)
	}
	return out
}

// exportInvalid says why an export of k whose cluster holds svc (nil: none) is not a constituent,
// with the reason and message of Compute's Valid=False condition; "" when it is valid.
func exportInvalid(k key, svc *corev1.Service) (reason, message string) {
	switch {
	case svc == nil || names.IsManaged(svc.Labels):
		return string(mcsv1beta1.ServiceExportReasonNoService), fmt.Sprintf("Service %q not found in namespace %q.", k.Name, k.Namespace)
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return string(mcsv1beta1.ServiceExportReasonInvalidServiceType), fmt.Sprintf("Service %q is of type ExternalName, which cannot be exported.", k.Name)
	}
	return "", ""
}

// Unimportable are the reachable clusters of obs that cannot import service k, which some cluster
// of obs exports validly, because they lack its namespace (KEP-1645: a service is imported only
// where its namespace exists; a terminating one counts as none), sorted. nil when nothing read
// exports it.
func Unimportable(obs Observed, k types.NamespacedName) []string {
	exported := false
	var out []string
	for _, c := range obs.Clusters {
		for _, e := range c.ServiceExports {
			if e.Namespace == k.Namespace && e.Name == k.Name && e.DeletionTimestamp == nil {
				i := slices.IndexFunc(c.Services, func(s *corev1.Service) bool { return s.Namespace == k.Namespace && s.Name == k.Name })
				var svc *corev1.Service
				if i >= 0 {
					svc = c.Services[i]
				}
				reason, _ := exportInvalid(k, svc)
				exported = exported || reason == ""
			}
		}
		if c.Reachable && !slices.Contains(c.Namespaces, k.Namespace) {
			out = append(out, c.ID)
		}
	}
	if !exported {
		return nil
	}
	sort.Strings(out)
	return out
}

// NoNamespaceMessage says that the service cannot be imported in clusters, lacking namespace ns:
// the words status, sync and diagnose share, as a clause ("not imported in ...", no full stop).
func NoNamespaceMessage(ns string, clusters []string) string {
	they := "it has"
	if len(clusters) > 1 {
		they = "they have"
	}
	return fmt.Sprintf("not imported in %s: %s no namespace %q (a service is imported only where its namespace exists)", quoteJoin(clusters), they, ns)
}
