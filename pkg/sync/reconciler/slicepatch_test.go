package reconciler

import (
	"encoding/json"
	"reflect"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// What an apply would do, as a merge patch: our label no longer wanted goes, theirs stays
// unmentioned; the new derived Service replaces the old one as controller, their owner stays.
func TestSlicePatch(t *testing.T) {
	yes := true
	owner := func(uid types.UID, controller bool) metav1.OwnerReference {
		o := metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: "derived-web", UID: uid}
		if controller {
			o.Controller = &yes
		}
		return o
	}
	ours := `{"f:metadata":{"f:labels":{"f:managed":{},"f:ours-once":{}},"f:annotations":{"f:note":{}}}}`
	last := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-m1", Namespace: "ns", UID: "u1",
		Labels:          map[string]string{"managed": "kubectl-mcs", "ours-once": "x", "theirs": "y"},
		Annotations:     map[string]string{"note": "a", "their-note": "b"},
		OwnerReferences: []metav1.OwnerReference{owner("old-derived", true), owner("their-owner", false)},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl-mcs", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(ours)}},
			{Manager: "someone-else", Operation: metav1.ManagedFieldsOperationUpdate},
		}}}
	want := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-m1", Namespace: "ns",
		Labels:          map[string]string{"managed": "kubectl-mcs"},
		OwnerReferences: []metav1.OwnerReference{owner("new-derived", true)}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}
	got, body := patchOf(t, want, last)
	md := got["metadata"].(map[string]any)
	if w := map[string]any{"managed": "kubectl-mcs", "ours-once": nil}; !reflect.DeepEqual(md["labels"], w) {
		t.Errorf("labels %v, want %v (theirs unmentioned)", md["labels"], w)
	}
	if w := map[string]any{"note": nil}; !reflect.DeepEqual(md["annotations"], w) {
		t.Errorf("annotations %v, want %v", md["annotations"], w)
	}
	var uids []string
	for _, r := range md["ownerReferences"].([]any) {
		uids = append(uids, r.(map[string]any)["uid"].(string))
	}
	if w := []string{"new-derived", "their-owner"}; !reflect.DeepEqual(uids, w) {
		t.Errorf("owners %v, want %v", uids, w)
	}
	if md["uid"] != "u1" || got["addressType"] != "IPv4" || got["endpoints"] == nil {
		t.Errorf("want the UID precondition and the slice's own fields: %s", body)
	}

	// No owner left: the list is emptied, not left as it was.
	want.OwnerReferences = nil
	last.OwnerReferences = last.OwnerReferences[:1]
	got, _ = patchOf(t, want, last)
	if refs, ok := got["metadata"].(map[string]any)["ownerReferences"].([]any); !ok || len(refs) != 0 {
		t.Errorf("ownerReferences %v, want []", got["metadata"])
	}
}

// A copy whose source lost every endpoint (or port) loses them too: the patch names the empty
// fields, or the merge would leave the old ones in place.
func TestSlicePatchEmpties(t *testing.T) {
	last := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-m1", Namespace: "ns", UID: "u1"},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		Ports: []discoveryv1.EndpointPort{{Port: new(int32(80))}}}
	want := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-m1", Namespace: "ns"}, AddressType: discoveryv1.AddressTypeIPv4}
	got, body := patchOf(t, want, last)
	for _, f := range []string{"endpoints", "ports"} {
		if l, ok := got[f].([]any); !ok || len(l) != 0 {
			t.Errorf("%s: %v, want []: %s", f, got[f], body)
		}
	}
}

// patchOf is slicePatch's patch for the update of last to want, decoded, and as sent.
func patchOf(t *testing.T, want, last *discoveryv1.EndpointSlice) (map[string]any, []byte) {
	t.Helper()
	a := engine.Action{Cluster: "m1", Kind: snapshot.KindEndpointSlice, Verb: engine.VerbUpdate, Namespace: "ns", Name: want.Name, Object: want}
	obj, err := applyObject(a, "discovery.k8s.io/v1", "EndpointSlice", writeUID(a, last))
	if err != nil {
		t.Fatal(err)
	}
	body, err := slicePatch(obj, last, "kubectl-mcs")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	return got, body
}
