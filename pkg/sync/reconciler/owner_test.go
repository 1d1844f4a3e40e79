package reconciler

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// A slice whose derived Service was replaced gets the new owner by apply; the fields of our create
// must be handed over first, or the apply keeps the old owner beside the new one.
func TestOwnerChanges(t *testing.T) {
	slice := func(uids ...types.UID) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{}
		for _, u := range uids {
			s.OwnerReferences = append(s.OwnerReferences, metav1.OwnerReference{Kind: "Service", Name: "derived-a", UID: u})
		}
		return s
	}
	for _, c := range []struct {
		last, want *discoveryv1.EndpointSlice
		changes    bool
	}{
		{slice("old"), slice("old"), false},
		{slice("old"), slice("new"), true},
		{slice(), slice("new"), true},
		{slice("old", "other"), slice("old"), false},
	} {
		a := engine.Action{Kind: snapshot.KindEndpointSlice, Verb: engine.VerbUpdate, Object: c.want}
		if got := ownerChanges(a, c.last); got != c.changes {
			t.Errorf("owners %v -> %v: ownerChanges = %v, want %v", c.last.OwnerReferences, c.want.OwnerReferences, got, c.changes)
		}
	}
	if ownerChanges(engine.Action{Object: slice("new")}, nil) {
		t.Error("no observed object: nothing to hand over")
	}
}
