package member

import (
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func TestTrimKeepsOnlyOurManagerAndDropsLastApplied(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name:        "a",
		Annotations: map[string]string{snapshot.LastAppliedAnnotation: "{...}", "team": "x"},
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
	if got := string(svc.ManagedFields[1].FieldsV1.Raw); got != `{"f:metadata":{"f:annotations":{"f:b":{}},"f:labels":{"f:a":{}}},"f:spec":{"f:ports":{}}}` {
		t.Errorf("kept fields %s, want only metadata labels and annotations, and the spec", got)
	}
	if _, ok := svc.Annotations[snapshot.LastAppliedAnnotation]; ok || svc.Annotations["team"] != "x" {
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

func TestTrimSliceKeepsWhatTheEngineAndStatusRead(t *testing.T) {
	yes, zone, host := true, "z1", "web-0"
	mk := func() *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc",
			Labels:      map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
			Annotations: map[string]string{snapshot.LastChangeTriggerAnnotation: "2026-11-22T12:00:00Z", "team": "x"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Hostname: &host, Zone: &zone, NodeName: new("node-1"),
				Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-0", UID: "u1", APIVersion: "v1", ResourceVersion: "42", FieldPath: "spec"},
				Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z1"}}}, DeprecatedTopology: map[string]string{"a": "b"}}},
		}
	}
	s := mk()
	Trim(s, "kubectl-mcs")
	want := mk()
	want.Annotations = map[string]string{"team": "x"}
	e := &want.Endpoints[0]
	e.NodeName, e.Hints, e.DeprecatedTopology = nil, nil, nil
	e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-0", UID: "u1"}
	if !apiequality.Semantic.DeepEqual(s, want) {
		t.Errorf("trimmed slice:\n%+v\nwant\n%+v", s, want)
	}
	// Two objects decoded apart share one copy of what repeats.
	a, b := mk(), mk()
	a.Namespace, b.Namespace = strings.Clone("ns"), strings.Clone("ns")
	Trim(a, "kubectl-mcs")
	Trim(b, "kubectl-mcs")
	if unsafe.StringData(a.Namespace) != unsafe.StringData(b.Namespace) {
		t.Error("the namespace of two slices is not one string")
	}
}

// The slices sync copied are cached as metadata and a digest when the caches are sync's (a field
// manager named); every other slice, and every slice in status's caches, keeps its endpoints.
func TestTrimDigestsOurCopiesOnly(t *testing.T) {
	yes := true
	mk := func(labels map[string]string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-member1", Labels: labels, UID: "u1", ResourceVersion: "7"},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}}},
			Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(80))}}}
	}
	ours := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "web", mcsv1beta1.LabelSourceCluster: "member1"}
	theirs := map[string]string{mcsv1beta1.LabelServiceName: "web", mcsv1beta1.LabelSourceCluster: "member1"}
	source := map[string]string{discoveryv1.LabelServiceName: "web"}

	s := mk(ours)
	want := snapshot.SliceDigest(s)
	Trim(s, "kubectl-mcs")
	if !snapshot.Digested(s) || snapshot.SliceDigest(s) != want || s.Endpoints != nil || s.Ports != nil ||
		s.UID != "u1" || s.ResourceVersion != "7" || s.Labels[mcsv1beta1.LabelSourceCluster] != "member1" {
		t.Errorf("our copy in sync's caches: %+v; want its metadata and the digest %s", s, want)
	}
	for name, c := range map[string]struct {
		labels map[string]string
		keep   string
	}{"our copy in status's caches": {ours, ""}, "another controller's copy": {theirs, "kubectl-mcs"}, "a source slice": {source, "kubectl-mcs"}} {
		s := mk(c.labels)
		Trim(s, c.keep)
		if snapshot.Digested(s) || len(s.Endpoints) != 1 || len(s.Ports) != 1 {
			t.Errorf("%s: %+v; want it whole", name, s)
		}
	}
}
