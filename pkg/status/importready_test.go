package status

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// The import's Ready condition, as sync writes it: True keeps the import Ready; False shows its
// reason as the cluster's import state, makes the row Degraded with the message, and the
// description shows the condition per member.
func TestImportReadyCondition(t *testing.T) {
	clusters := seed()
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "Service is imported: derived Service derived-serve serves it.", LastTransitionTime: at(3)}
	notSupported := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported),
		Message: "This cluster is not configured for IP family IPv6, which the service is exported in: derived Service derived-serve is refused.", LastTransitionTime: at(3)}
	clusters[0].ServiceImports[0].Status.Conditions = []metav1.Condition{ready}
	clusters[1].ServiceImports[0].Status.Conditions = []metav1.Condition{ready}
	l := Build(clusters)
	if it := only(t, l); it.Health != Healthy || it.Clusters[0].ImportState != ImportReady {
		t.Fatalf("Ready imports: health %s, problems %v, state %s", it.Health, it.Problems, it.Clusters[0].ImportState)
	}

	si := clusters[2].ServiceImports[0]
	si.Spec.IPs = nil
	si.Status.Conditions = []metav1.Condition{notSupported}
	l = Build(clusters)
	it := only(t, l)
	if it.Health != Degraded || it.Clusters[2].ImportState != ImportIPFamilyNotSupported {
		t.Errorf("member3 refused the family: health %s, state %s", it.Health, it.Clusters[2].ImportState)
	}
	if !hasProblem(it, `The ServiceImport in "member3" is not ready (IPFamilyNotSupported): This cluster is not configured for IP family IPv6`) {
		t.Errorf("problems %q", it.Problems)
	}
	if hasProblem(it, "no clusterset IP") {
		t.Errorf("the missing IP told twice: %q", it.Problems)
	}
	if c := it.Clusters[2].Import.Conditions; len(c) != 1 || c[0].Reason != notSupported.Reason {
		t.Errorf("-o json's import conditions %+v", c)
	}
	var b bytes.Buffer
	if err := Describe(&b, l, it, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    Import:               Ready\n    Import Ready:         True (Ready): Service is imported:",
		"    Import:               IPFamilyNotSupported\n    Import Ready:         False (IPFamilyNotSupported): This cluster",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, b.String())
		}
	}

	si.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pending", Message: "Waiting."}}
	if it := only(t, Build(clusters)); it.Clusters[2].ImportState != ImportPending || !hasProblem(it, "(Pending): Waiting.") {
		t.Errorf("Pending: state %s, problems %q", it.Clusters[2].ImportState, it.Problems)
	}
}
