package engine

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Compute merges the observed clusters into the desired state. It is deterministic: the order of
// clusters and of objects within them does not change the result.
func Compute(obs Observed) Desired {
	idx := indexClusters(obs)
	mem := newMembership(obs)
	d := Desired{Clusters: map[string]*ClusterDesired{}}
	for _, ci := range idx {
		if ci.Reachable && (obs.For == "" || obs.For == ci.ID) {
			d.Clusters[ci.ID] = &ClusterDesired{ExportConditions: map[key][]metav1.Condition{}}
		}
	}

	failing := map[key][]WriteFailure{}
	for _, f := range obs.Failing {
		failing[f.Service] = append(failing[f.Service], f)
	}
	for _, k := range decidedKeys(obs, idx) {
		computeService(obs.Now, idx, mem, &d, k, failing[k])
	}
	applyHints(idx, &d)

	slices.SortStableFunc(d.Conflicts, CompareConflicts)
	for _, cd := range d.Clusters {
		sortDesired(cd)
	}
	return d
}

// computeService decides one exported service in every cluster: the statuses of its exports, and
// what each importing cluster gets.
func computeService(now metav1.Time, idx []*clusterIndex, mem membership, d *Desired, k key, failing []WriteFailure) {
	cons := readConstituents(now, idx, d, k)
	if len(cons) == 0 {
		// Nothing read exports it: Plan deletes what we wrote for it, except what stands for
		// clusters that were not read.
		for _, ci := range idx {
			if cd := d.Clusters[ci.ID]; cd != nil {
				holdOnly(ci, cd, mem, k)
			}
		}
		return
	}
	e := newExported(idx, mem, k, cons)
	d.Conflicts = append(d.Conflicts, e.conflicts...)
	pending, foreign := importEverywhere(idx, d, e)

	ready, conflict := readyCondition(failing, pending, foreign), conflictCondition(e.conflicts)
	for _, c := range cons {
		cd := d.Clusters[c.cluster]
		if cd == nil {
			continue // unreachable: nothing is written there
		}
		valid := validCondition(c.export)
		cd.ExportConditions[k] = pruneConditions(findCluster(idx, c.cluster), c.export,
			resolveConditions(c.export, now, []metav1.Condition{valid, ready, conflict}))
	}
}

// ReasonAnnotationsNotExported is the Valid reason (status True) of an export whose
// exportedAnnotations name one that sync cannot keep on a ServiceImport (snapshot.DroppedAnnotation):
// the service is exported without it, and the message names it.
const ReasonAnnotationsNotExported = "AnnotationsNotExported"

// validCondition is a constituent export's Valid condition.
func validCondition(exp *mcsv1beta1.ServiceExport) metav1.Condition {
	valid := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), Status: metav1.ConditionTrue,
		Reason: string(mcsv1beta1.ServiceExportReasonValid), Message: "Service is exported."}
	if _, notKept := keptAnnotations(exp.Spec.ExportedAnnotations); len(notKept) > 0 {
		valid.Reason = ReasonAnnotationsNotExported
		valid.Message = "Service is exported without exported annotation " + strings.Join(notKept, ", ") + "."
	}
	return valid
}

// readConstituents returns the valid exports of k, sorted; an invalid one gets only its Valid
// condition (Ready and Conflict say nothing about an export that is not part of the service, and
// Plan removes stale ones).
func readConstituents(now metav1.Time, idx []*clusterIndex, d *Desired, k key) []constituent {
	var cons []constituent
	for _, ci := range idx {
		exp := ci.exports[k]
		if exp == nil {
			continue
		}
		svc := ci.ix.Services[k]
		reason, msg := exportInvalid(k, svc)
		if reason == "" {
			cons = append(cons, constituent{cluster: ci.ID, export: exp, svc: svc})
			continue
		}
		if cd := d.Clusters[ci.ID]; cd != nil {
			invalid := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), Status: metav1.ConditionFalse, Reason: reason, Message: msg}
			cd.ExportConditions[k] = pruneConditions(ci, exp, resolveConditions(exp, now, []metav1.Condition{invalid}))
		}
	}
	sortConstituents(cons)
	return cons
}

// importEverywhere builds the import in every reachable cluster that has the namespace, unless an
// object we did not create holds its name there (foreign). pending are those without the
// ServiceImport yet.
func importEverywhere(idx []*clusterIndex, d *Desired, e *exported) (pending, foreign []string) {
	k := e.key
	dk := key{Namespace: k.Namespace, Name: e.derived}
	for _, ci := range idx {
		if !ci.Reachable || !ci.ix.Namespaces[k.Namespace] {
			continue
		}
		cd := d.Clusters[ci.ID] // nil for all but Observed.For: it still counts for the exports' Ready
		imp := ci.ix.Imports[k]
		if imp != nil && !names.IsManaged(imp.Labels) {
			cd.skip(snapshot.KindServiceImport, k.Namespace, k.Name, "ServiceImport exists and is not managed by kubectl-mcs; not importing here")
			foreign = append(foreign, ci.ID)
			continue
		}
		if s := ci.ix.Services[dk]; s != nil && !names.IsManaged(s.Labels) {
			// The derived name is taken: slices labelled for it would feed someone else's Service.
			cd.skip(snapshot.KindService, dk.Namespace, dk.Name, "Service exists and is not managed by kubectl-mcs; not importing here")
			foreign = append(foreign, ci.ID)
			continue
		}
		if imp == nil {
			pending = append(pending, ci.ID)
		}
		if cd != nil {
			buildImport(ci, cd, e)
		}
	}
	return pending, foreign
}

// skip records that cd's cluster does not import an object; nothing when cd is not decided here.
func (cd *ClusterDesired) skip(kind, ns, name, msg string) {
	if cd != nil {
		cd.Skipped = append(cd.Skipped, Skip{Kind: kind, Namespace: ns, Name: name, Message: msg})
	}
}

// readyCondition is the exports' Ready condition. No counts in its message: a reachability flap
// must not rewrite every export's status.
func readyCondition(failing []WriteFailure, pending, foreign []string) metav1.Condition {
	ready := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionReady), Status: metav1.ConditionTrue,
		Reason:  string(mcsv1beta1.ServiceExportReasonExported),
		Message: "ServiceImport present in every reachable importing cluster."}
	if len(failing)+len(pending)+len(foreign) == 0 {
		return ready
	}
	parts := failureParts(failing)
	if len(pending) > 0 {
		parts = append(parts, "ServiceImport not yet present in "+quoteJoin(pending))
	}
	if len(foreign) > 0 {
		parts = append(parts, "an object not managed by kubectl-mcs blocks the import in "+quoteJoin(foreign))
	}
	ready.Status = metav1.ConditionFalse
	ready.Reason = string(mcsv1beta1.ServiceExportReasonPending)
	if len(failing) > 0 {
		ready.Reason = string(mcsv1beta1.ServiceExportReasonFailed)
	}
	ready.Message = strings.Join(parts, "; ") + "."
	return ready
}

// conflictCondition is the exports' Conflict condition: every conflict's reason and message.
func conflictCondition(conflicts []Conflict) metav1.Condition {
	conflict := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionConflict), Status: metav1.ConditionFalse,
		Reason: string(mcsv1beta1.ServiceExportReasonNoConflicts), Message: "No conflicts."}
	if len(conflicts) == 0 {
		return conflict
	}
	reasons := make([]string, len(conflicts))
	msgs := make([]string, len(conflicts))
	for i, c := range conflicts {
		reasons[i], msgs[i] = c.Reason, c.Message
	}
	conflict.Status = metav1.ConditionTrue
	conflict.Reason = strings.Join(reasons, ",")
	conflict.Message = strings.Join(msgs, " ")
	return conflict
}

// failureParts name each failing object and the apiserver's answer, in the order of a plan.
func failureParts(fs []WriteFailure) []string {
	fs = slices.Clone(fs)
	slices.SortFunc(fs, func(a, b WriteFailure) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), kindOrder[a.Kind]-kindOrder[b.Kind],
			strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s %s/%s in %q cannot be written: %s", f.Kind, f.Namespace, f.Name, f.Cluster, strings.TrimSuffix(f.Message, "."))
	}
	return out
}

// holdOnly keeps, in a cluster where no read member exports k, the import, derived Service and
// slices that stand for unread source clusters; the import then names only those.
func holdOnly(ci *clusterIndex, cd *ClusterDesired, mem membership, k key) {
	held := mem.heldSources(ci, k)
	if len(held) == 0 {
		return
	}
	if imp := ci.ix.Imports[k]; imp != nil && names.IsManaged(imp.Labels) {
		// Its annotations as they are: the identities recorded of clusters no longer named are
		// still true, and taking them out would be a write for nothing.
		si := imp.DeepCopy()
		si.Status.Clusters = nil
		for _, c := range held {
			si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
		cd.ServiceImports = append(cd.ServiceImports, si)
	}
	dk := key{Namespace: k.Namespace, Name: names.DerivedServiceName(k.Name)}
	if s := ci.ix.Services[dk]; s != nil && names.IsManaged(s.Labels) {
		cd.Held = append(cd.Held, Held{Kind: snapshot.KindService, Namespace: dk.Namespace, Name: dk.Name, Source: held[0], Outside: mem.outside(held[0])})
	}
	holdSlices(ci, cd, mem, k)
}

// holdSlices keeps ci's copies of k whose source cluster was not read.
func holdSlices(ci *clusterIndex, cd *ClusterDesired, mem membership, k key) {
	for _, s := range ci.copies[k] {
		if src := s.Labels[mcsv1beta1.LabelSourceCluster]; mem.unread(src) {
			cd.Held = append(cd.Held, Held{Kind: snapshot.KindEndpointSlice, Namespace: s.Namespace, Name: s.Name, Source: src, Outside: mem.outside(src)})
		}
	}
}

// CompareConflicts orders conflicts by namespace, service, reason: the order of every report.
func CompareConflicts(a, b Conflict) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Service, b.Service), strings.Compare(a.Reason, b.Reason))
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// resolveConditions stamps generation and keeps the old transition time when the status holds.
func resolveConditions(exp *mcsv1beta1.ServiceExport, now metav1.Time, want []metav1.Condition) []metav1.Condition {
	for i := range want {
		want[i].ObservedGeneration = exp.Generation
		want[i].LastTransitionTime = now
		for _, old := range exp.Status.Conditions {
			if old.Type == want[i].Type && old.Status == want[i].Status && !old.LastTransitionTime.IsZero() {
				want[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	return want
}

func sortDesired(cd *ClusterDesired) {
	sort.Slice(cd.ServiceImports, func(i, j int) bool {
		return objLess(cd.ServiceImports[i].ObjectMeta, cd.ServiceImports[j].ObjectMeta)
	})
	sort.Slice(cd.Services, func(i, j int) bool { return objLess(cd.Services[i].ObjectMeta, cd.Services[j].ObjectMeta) })
	sort.Slice(cd.EndpointSlices, func(i, j int) bool {
		return objLess(cd.EndpointSlices[i].ObjectMeta, cd.EndpointSlices[j].ObjectMeta)
	})
	slices.SortFunc(cd.Held, func(a, b Held) int {
		return byNamespaceNameKind(a.Namespace, a.Name, a.Kind, b.Namespace, b.Name, b.Kind)
	})
	slices.SortStableFunc(cd.Skipped, func(a, b Skip) int {
		return byNamespaceNameKind(a.Namespace, a.Name, a.Kind, b.Namespace, b.Name, b.Kind)
	})
}

func byNamespaceNameKind(ans, aname, akind, bns, bname, bkind string) int {
	return cmp.Or(strings.Compare(ans, bns), strings.Compare(aname, bname), strings.Compare(akind, bkind))
}

func objLess(a, b metav1.ObjectMeta) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
