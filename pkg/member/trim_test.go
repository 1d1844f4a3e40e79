package member

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimKeepsOnlyOurManagerAndDropsLastApplied(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name:        "a",
		Annotations: map[string]string{lastApplied: "{...}", "team": "x"},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}, APIVersion: "v1"},
			{Manager: "kubectl-mcs", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:metadata":{"f:labels":{"f:a":{}},"f:annotations":{"f:b":{}},"f:ownerReferences":{}},"f:spec":{"f:ports":{}}}`)}},
			{Manager: "kubectl-mcs", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		},
	}}
	out, err := trim("kubectl-mcs")(svc)
	if err != nil || out != any(svc) {
		t.Fatalf("trim returned %v, %v; want the same object", out, err)
	}
	if mf := svc.ManagedFields; len(mf) != 3 || mf[0] != (metav1.ManagedFieldsEntry{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate}) ||
		mf[1].Operation != metav1.ManagedFieldsOperationApply || mf[2].Subresource != "status" {
		t.Errorf("managedFields = %+v, want the other manager's entry as a stub in its place, then kubectl-mcs's two", mf)
	}
	if got := string(svc.ManagedFields[1].FieldsV1.Raw); got != `{"f:metadata":{"f:annotations":{"f:b":{}},"f:labels":{"f:a":{}}}}` {
		t.Errorf("kept fields %s, want only metadata labels and annotations", got)
	}
	if _, ok := svc.Annotations[lastApplied]; ok || svc.Annotations["team"] != "x" {
		t.Errorf("annotations = %v, want only team=x", svc.Annotations)
	}

	Trim(svc, "")
	if svc.ManagedFields != nil {
		t.Errorf("keep \"\": managedFields = %+v, want none", svc.ManagedFields)
	}

	tomb := cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: svc}
	if out, err := trim("kubectl-mcs")(tomb); err != nil || out != any(tomb) {
		t.Errorf("a tombstone: %v, %v; want it unchanged", out, err)
	}
}
