package process

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// The leader's writes of the Lease carry its view; a write by one that does not lead (yet: the
// write that acquires the Lease) takes its predecessor's away, which would be told as its own.
func TestLeaseWritesCarryTheLeadersView(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	e := NewElector(&clusterset.Connection{Ref: clusterset.Ref{ID: "member1"}, Client: client})
	e.SetView(func() snapshot.SyncView {
		return snapshot.SyncView{Local: "member1", Members: []snapshot.SyncViewedMember{{Cluster: "member2", State: snapshot.Unreachable, Message: "connection refused"}}}
	})
	leases := stampedLeases{LeasesGetter: client.CoordinationV1(), e: e}.Leases("kubectl-mcs-system")
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: "kubectl-mcs-system"}}

	got, err := leases.Create(ctx, l, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := snapshot.ParseSyncView(got.Annotations); v != nil {
		t.Fatalf("a standby's create stamped a view: %+v", v)
	}
	e.setLeading(true)
	if got, err = leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v := snapshot.ParseSyncView(got.Annotations)
	if v == nil || v.Local != "member1" || len(v.Members) != 1 || v.Members[0].State != snapshot.Unreachable || v.Members[0].Message != "connection refused" {
		t.Fatalf("the leader's renewal carries %+v (annotations %v)", v, got.Annotations)
	}
	next := NewElector(&clusterset.Connection{Ref: clusterset.Ref{ID: "member1"}, Client: client})
	next.SetView(e.view)
	got.Spec.HolderIdentity = ptr("the-next-pod")
	if got, err = (stampedLeases{LeasesGetter: client.CoordinationV1(), e: next}).Leases("kubectl-mcs-system").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := snapshot.ParseSyncView(got.Annotations); v != nil {
		t.Fatalf("the write acquiring the Lease for another pod kept its predecessor's view: %+v", v)
	}
}

func ptr[T any](v T) *T { return &v }
