package diagnose

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

func setImportReady(s *Snapshot, cluster string, status metav1.ConditionStatus, reason mcsv1beta1.ServiceImportConditionReason, msg string) {
	si := memberOf(s, cluster).ServiceImports[0]
	si.Status.Conditions = []metav1.Condition{{Type: string(mcsv1beta1.ServiceImportConditionReady), Status: status, Reason: string(reason), Message: msg}}
}

// The import's Ready condition: True changes nothing; Pending warns with a sync pass as the fix;
// IPFamilyNotSupported fails with the family fix, and the missing derived Service says why.
func TestImportReadyCondition(t *testing.T) {
	s := healthy()
	for _, m := range []string{"member1", "member2", "member3"} {
		setImportReady(s, m, metav1.ConditionTrue, mcsv1beta1.ServiceImportReasonReady, "Service is imported.")
	}
	if r := Run(s); failed(r) != "" {
		t.Errorf("Ready imports:\n%s", failed(r))
	}

	s = healthy()
	setImportReady(s, "member3", metav1.ConditionFalse, mcsv1beta1.ServiceImportReasonPending, "Waiting for derived Service derived-serve.")
	expectOne(t, Run(s), CheckImport, "member3", Warn, "not ready (Pending): Waiting for derived Service derived-serve.", "kubectl mcs sync")

	s = healthy()
	const refused = "This cluster is not configured for IP family IPv6, which the service is exported in: derived Service derived-serve is refused."
	setImportReady(s, "member3", metav1.ConditionFalse, mcsv1beta1.ServiceImportReasonIPFamilyNotSupported, refused)
	expectOne(t, Run(s), CheckImport, "member3", Fail, "not ready (IPFamilyNotSupported): "+refused, "PreferDualStack")

	m := memberOf(s, "member3")
	m.Services = m.Services[:0]
	expectHas(t, Run(s), CheckDerived, "member3", Fail, "this cluster refuses it, not being configured for the exported IP family", "PreferDualStack")
}
