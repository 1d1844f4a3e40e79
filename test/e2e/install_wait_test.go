//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// TestInstallWait: install --wait against kwok, whose pods run nothing, with the test playing
// the leader on the Lease. Without a Lease it times out saying no leader; with a leader of the
// new pods reporting member3 unreachable it fails within --timeout, naming member3, the address
// the pods use and the error; with every member read it succeeds. A changed address rolls the
// pods, and the old ReplicaSet's leader does not count: install waits until a pod of the new
// one reports.
func TestInstallWait(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	ctx := context.Background()
	wrong := "https://127.0.0.1:1"
	base := []string{"install", "--contexts", allMembers, "--context", "member1", "--image=kubectl-mcs/kubectl-mcs:e2e",
		"--memory-request=200Mi", "--memory-limit=1Gi"}
	at := func(member3 string, more ...string) []string {
		return append(append(append([]string{}, base...), "--member-server=member2="+server(t, "member2")+",member3="+member3), more...)
	}
	mustMCS(t, at(wrong, noWait)...)
	rs := newReplicaSet(t, "")

	r := mcs(at(wrong, "--timeout=6s")...)
	if want := `sync in "member1": rolled out; no leader: no Lease kubectl-mcs-system/kubectl-mcs-sync in cluster "member1" yet`; r.code == 0 || !strings.Contains(r.stderr, "timed out after 6s waiting for the sync:\n  "+want) {
		t.Errorf("no Lease: exit %d, stderr:\n%s\nwant the timeout naming: %s", r.code, r.stderr, want)
	}

	refused := "dial tcp 127.0.0.1:1: connect: connection refused"
	playLeader(t, rs+"-kwok1", snapshot.SyncViewedMember{Cluster: "member3", State: snapshot.Joining, Message: refused})
	start := time.Now()
	r = mcs(at(wrong, "--timeout=6s")...)
	took := time.Since(start)
	want := `cluster "member3": the sync pods in "member1" cannot read it at ` + wrong + ": " + refused
	if r.code == 0 || !strings.Contains(r.stderr, "error: timed out after 6s waiting for the sync: 1 member(s) not reachable from its pods") ||
		!strings.Contains(r.stderr, "\n  "+want+"\n") {
		t.Errorf("member3 unreachable: exit %d, stderr:\n%s\nwant a line: %s", r.code, r.stderr, want)
	}
	if !strings.Contains(r.stderr, `sync in "member1": rolled out; the leader `+rs+`-kwok1 does not read 1 of 3 members: member3 (joining)`) {
		t.Errorf("no progress line naming member3:\n%s", r.stderr)
	}
	if took > 30*time.Second {
		t.Errorf("install took %s with --timeout=6s", took)
	}

	// The right address: the Secret changes, the pods roll; the old leader's view, though every
	// member is read in it, is not the new pods'.
	playLeader(t, rs+"-kwok1")
	done := make(chan result, 1)
	go func() { done <- mcs(at(server(t, "member3"), "--timeout=90s")...) }()
	next := newReplicaSet(t, rs)
	waitFor(t, "the rollout of "+next, func() bool {
		d, err := clients["member1"].kube.AppsV1().Deployments(install.DefaultNamespace).Get(ctx, install.Name, metav1.GetOptions{})
		return err == nil && d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == *d.Spec.Replicas &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas
	})
	time.Sleep(3 * time.Second) // install reads every 2 s
	select {
	case r := <-done:
		t.Fatalf("install returned while the old ReplicaSet's pod led: exit %d\n%s", r.code, r.stderr)
	default:
	}
	playLeader(t, next+"-kwok2")
	r = <-done
	if r.code != 0 {
		t.Fatalf("the right address: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{`no pod of replicaset "` + next + `" leads yet`, `sync in "member1": rolled out; its leader reads all 3 members`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the right address: no line %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "member1: deployment.apps/"+install.Name+" configured") {
		t.Errorf("the right address did not change the Deployment:\n%s", r.stdout)
	}

	// --wait=false and a dry run return at once, whatever leads.
	_ = clients["member1"].kube.CoordinationV1().Leases(install.DefaultNamespace).Delete(ctx, rbac.LeaseName, metav1.DeleteOptions{})
	for _, extra := range [][]string{{noWait}, {"--dry-run=server", "--timeout=1s"}} {
		if r := mcs(at(server(t, "member3"), extra...)...); r.code != 0 {
			t.Errorf("%v: exit %d\n%s", extra, r.code, r.stderr)
		}
	}
}

// newReplicaSet waits for the ReplicaSet of member1's Deployment's current revision, other than
// old, and names it.
func newReplicaSet(t *testing.T, old string) string {
	t.Helper()
	ctx := context.Background()
	var name string
	waitFor(t, "the new replicaset of "+install.Name, func() bool {
		d, err := clients["member1"].kube.AppsV1().Deployments(install.DefaultNamespace).Get(ctx, install.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		l, err := clients["member1"].kube.AppsV1().ReplicaSets(install.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + install.Name})
		if err != nil {
			return false
		}
		rev := d.Annotations["deployment.kubernetes.io/revision"]
		for _, rs := range l.Items {
			if rev != "" && rs.Annotations["deployment.kubernetes.io/revision"] == rev && rs.Name != old {
				name = rs.Name
				return true
			}
		}
		return false
	})
	return name
}

// playLeader writes member1's Lease as a leader pod renewing it now would: held by pod, its
// view every member read but those given.
func playLeader(t *testing.T, pod string, notRead ...snapshot.SyncViewedMember) {
	t.Helper()
	ctx := context.Background()
	view := snapshot.SyncView{Synced: true}
	for _, c := range members {
		m := snapshot.SyncViewedMember{Cluster: c, State: snapshot.Reachable}
		for _, n := range notRead {
			if n.Cluster == c {
				m = n
			}
		}
		view.Members = append(view.Members, m)
	}
	b, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	leases := clients["member1"].kube.CoordinationV1().Leases(install.DefaultNamespace)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: rbac.LeaseName, Namespace: install.DefaultNamespace,
		Annotations: map[string]string{snapshot.SyncViewAnnotation: string(b)}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(pod + "_e2e"), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	old, err := leases.Get(ctx, rbac.LeaseName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
	case err == nil:
		l.ResourceVersion = old.ResourceVersion
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}
