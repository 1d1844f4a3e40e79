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

// The leader's writes of the Lease carry its view; a standby's leave the Lease's view as it is.
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
	e.setLeading(false)
	if got, err = leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil || snapshot.ParseSyncView(got.Annotations) == nil {
		t.Fatalf("a former leader's write dropped the view: %v, %v", err, got.Annotations)
	}
}
