package engine

// The ServiceImport's Ready condition (mcs-api v1beta1, KEP-1645): whether the import can be
// used in the cluster that holds it.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// importReady is the Ready condition of the import in ci: svc is the derived Service ci holds
// (nil: none yet), copies the slices desired there. Its transition time is the observed one while
// the status holds (meta.SetStatusCondition's rule), else obs.Now.
func (e *exported) importReady(ci *clusterIndex, svc *corev1.Service, copies []*discoveryv1.EndpointSlice) metav1.Condition {
	c := e.importReadiness(ci, svc, copies)
	c.LastTransitionTime = ci.now
	if imp := ci.ix.Imports[e.key]; imp != nil {
		if old := meta.FindStatusCondition(imp.Status.Conditions, c.Type); old != nil && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	return c
}

// importReadiness decides the condition, transition time aside:
//   - False, IPFamilyNotSupported: ci refused the derived Service because it is not configured for
//     the exported family (a single-stack ClusterSetIP export; a dual-stack one names no family,
//     and a selectorless headless Service takes any). Known from the refusal (obs.Failing); kept
//     while the derived Service is still missing, so that a sync that has not tried the write yet
//     does not say Pending in between.
//   - False, Pending: the derived Service is not there, or has no cluster IP (ClusterSetIP; a
//     headless import needs none), or none of the copies desired in ci is there yet. Only the first
//     copies count: a new source slice later does not take a working import back to Pending.
//   - True, Ready otherwise.
//
// No message carries a count or an IP, nor says which step Pending waits for: each is fixed by
// the reason and the service's names, so the steps of one import write its status twice, not once
// per step.
func (e *exported) importReadiness(ci *clusterIndex, svc *corev1.Service, copies []*discoveryv1.EndpointSlice) metav1.Condition {
	c := metav1.Condition{Type: string(mcsv1beta1.ServiceImportConditionReady), Status: metav1.ConditionFalse,
		Reason: string(mcsv1beta1.ServiceImportReasonPending)}
	pending := e.typ == mcsv1beta1.ClusterSetIP && (svc == nil || len(clusterIPs(svc)) == 0) || svc == nil ||
		len(copies) > 0 && !anyCopied(ci, copies)
	switch {
	case svc == nil && e.familyRefused(ci):
		c.Reason = string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported)
		c.Message = fmt.Sprintf("This cluster is not configured for IP family %s, which the service is exported in: derived Service %s is refused.",
			familiesString(e.ipFamilies), e.derived)
	case pending:
		// One message whatever is missing: each step would otherwise write the status again.
		c.Message = "Waiting for derived Service " + e.derived + ", its cluster IP and the first EndpointSlice copies."
		if e.typ == mcsv1beta1.Headless {
			c.Message = "Waiting for derived Service " + e.derived + " and the first EndpointSlice copies."
		}
	default:
		c.Status, c.Reason = metav1.ConditionTrue, string(mcsv1beta1.ServiceImportReasonReady)
		c.Message = "Service is imported: derived Service " + e.derived + " serves it."
	}
	return c
}

// familyRefused: a write of ci's derived Service keeps failing because ci is not configured for
// the exported family, or the import already says so and the export is still single-stack
// ClusterSetIP (the only kind of export ci can refuse so).
func (e *exported) familyRefused(ci *clusterIndex) bool {
	for _, f := range ci.failing {
		if f.Service == e.key && f.Kind == snapshot.KindService && f.Namespace == e.key.Namespace && f.Name == e.derived &&
			FamilyRefusal(f.Message) {
			return true
		}
	}
	if e.typ != mcsv1beta1.ClusterSetIP || len(e.ipFamilies) != 1 {
		return false
	}
	if imp := ci.ix.Imports[e.key]; imp != nil {
		old := meta.FindStatusCondition(imp.Status.Conditions, string(mcsv1beta1.ServiceImportConditionReady))
		return old != nil && old.Reason == string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported)
	}
	return false
}

// FamilyRefusal tells the apiserver's answer to a Service whose IP family (or dual-stack policy)
// the cluster is not configured for.
func FamilyRefusal(message string) bool {
	return strings.Contains(message, "not configured on this cluster") || strings.Contains(message, "not configured for dual-stack")
}

// anyCopied: ci holds one of the copies (ours) desired there.
func anyCopied(ci *clusterIndex, copies []*discoveryv1.EndpointSlice) bool {
	for _, s := range copies {
		if o := ci.ix.Slices[key{Namespace: s.Namespace, Name: s.Name}]; o != nil && names.IsManaged(o.Labels) {
			return true
		}
	}
	return false
}

// importReadyEqual compares the Ready condition desired (d) with the one observed (o) on what
// the engine decides; none desired (a served schema without conditions) is nothing to write.
func importReadyEqual(o, d []metav1.Condition) bool {
	want := meta.FindStatusCondition(d, string(mcsv1beta1.ServiceImportConditionReady))
	if want == nil {
		return true
	}
	have := meta.FindStatusCondition(o, want.Type)
	return have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message
}
