package diagnose

// The ServiceImport's Ready condition (mcs-api v1beta1), which sync writes in every member: an
// import whose sources are right can still be unusable there.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// familyFix is what to do about an import this cluster cannot serve in the exported family.
const familyFix = "Export the service in a family this cluster has: a Service with ipFamilyPolicy PreferDualStack is imported in whichever of its families each cluster has (or configure this cluster for the exported family)."

// notReady is the import's Ready condition when it is not True; nil when True or absent (a
// v1alpha1 schema without conditions, or a sync that predates the condition).
func notReady(si *mcsv1beta1.ServiceImport) *metav1.Condition {
	c := meta.FindStatusCondition(si.Status.Conditions, string(mcsv1beta1.ServiceImportConditionReady))
	if c == nil || c.Status == metav1.ConditionTrue {
		return nil
	}
	return c
}

// importReadiness makes the import check's result, when it found nothing wrong, tell an import
// that says it is not ready: IPFamilyNotSupported fails (sync cannot change it), Pending warns (a
// sync under way, or one that stopped halfway).
func importReadiness(r *Result, sv service, si *mcsv1beta1.ServiceImport) {
	c := notReady(si)
	if r.Severity != OK || c == nil {
		return
	}
	r.Message = fmt.Sprintf("%s; but not ready (%s): %s", r.Message, c.Reason, c.Message)
	if c.Reason == string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported) {
		r.Severity, r.Fix = Fail, familyFix
		return
	}
	r.Severity, r.Fix, r.sync = Warn, runSyncFix, syncPass(sv.Namespace)
}

// familyRefused: the import says this cluster refused its derived Service for its IP family.
func familyRefused(si *mcsv1beta1.ServiceImport) bool {
	c := notReady(si)
	return c != nil && c.Reason == string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported)
}
