package process

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

func TestReadiness(t *testing.T) {
	down := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	lease := func(tried bool, err error, holder string) leaseState {
		return leaseState{Cluster: "member1", Tried: tried, Err: err, Holder: holder}
	}
	cases := []struct {
		name   string
		st     probeState
		ok     bool
		reason string
	}{
		{"no election, syncing", probeState{}, false, "caches not synced"},
		{"no election, synced", probeState{Synced: true}, true, "ok"},
		{"leader, syncing", probeState{LeaderElect: true, Leading: true, Lease: lease(true, nil, "me")}, false, "caches not synced"},
		{"leader, synced", probeState{LeaderElect: true, Leading: true, Synced: true, Lease: lease(true, nil, "me")}, true, "leading"},
		{"standby, nothing read yet", probeState{LeaderElect: true, Lease: lease(false, nil, "")}, false, "not read yet"},
		{"standby, Lease cluster down", probeState{LeaderElect: true, Lease: lease(true, down, "")}, false, `Lease cluster "member1": dial tcp`},
		{"standby, other holder seen", probeState{LeaderElect: true, Lease: lease(true, nil, "other")}, true, `standing by (Lease in cluster "member1" held by "other")`},
		{"standby, down after a holder was seen", probeState{LeaderElect: true, Lease: lease(true, down, "other")}, false, "connection refused"},
	}
	for _, c := range cases {
		ok, reason := readiness(c.st)
		if ok != c.ok || !strings.Contains(reason, c.reason) {
			t.Errorf("%s: readiness = %v %q, want %v and a reason containing %q", c.name, ok, reason, c.ok, c.reason)
		}
	}
}

// TestObservedLock: the lock reports failed and successful Lease reads to the Elector, so that a
// standby is ready only while the Lease cluster answers.
func TestObservedLock(t *testing.T) {
	client := fake.NewClientset()
	down := true
	client.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	e := &Elector{member: &clusterset.Connection{Ref: clusterset.Ref{Context: "member1", ID: "member1"}}, lease: leaseState{Cluster: "member1"}}
	lock := &observedLock{e: e, Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: "kube-system"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "me"},
	}}
	ctx := context.Background()
	if _, _, err := lock.Get(ctx); err == nil {
		t.Fatal("Get with the cluster down: no error")
	}
	if st := e.state(); !st.Tried || st.Err == nil {
		t.Errorf("after a failed Get: %+v", st)
	}
	if !strings.Contains(lock.Describe(), `cluster "member1"`) {
		t.Errorf("Describe() = %q, want the cluster named", lock.Describe())
	}
	down = false
	holder := "other"
	if _, err := client.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: "kube-system"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lock.Get(ctx); err != nil {
		t.Fatal(err)
	}
	st := e.state()
	if st.Err != nil || st.Holder != "other" {
		t.Errorf("after a successful Get: %+v", st)
	}
	if ok, reason := readiness(probeState{LeaderElect: true, Lease: st}); !ok {
		t.Errorf("standby with the Lease held by another: not ready: %s", reason)
	}
}
