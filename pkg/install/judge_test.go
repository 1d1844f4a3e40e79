package install

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func TestRolloutStatus(t *testing.T) {
	dep := func(gen, observed int64, spec, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: Name, Generation: gen},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(spec)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, Conditions: conds}}
	}
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		done bool
		want string
	}{
		{"spec not observed", dep(3, 2, 2, 2, 2, 2), false, "spec update to be observed"},
		{"updating", dep(3, 3, 2, 3, 1, 1), false, "1 out of 2 new replicas have been updated"},
		{"old pending termination", dep(3, 3, 2, 3, 2, 2), false, "1 old replicas are pending termination"},
		{"not available", dep(3, 3, 2, 2, 2, 1), false, "1 of 2 updated replicas are available"},
		{"done", dep(3, 3, 2, 2, 2, 2), true, "successfully rolled out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := RolloutStatus(tc.d)
			if err != nil || r.Done != tc.done || !strings.Contains(r.Message, tc.want) {
				t.Fatalf("got %+v, %v; want done=%v and %q", r, err, tc.done, tc.want)
			}
		})
	}
	_, err := RolloutStatus(dep(3, 3, 2, 2, 1, 1, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded"}))
	if err == nil || !strings.Contains(err.Error(), "exceeded its progress deadline") {
		t.Fatalf("past its deadline: got %v", err)
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	site := Site{Cluster: "member1", Lease: "member1", Members: []string{"member1", "member2", "member3"},
		Addresses: map[string]string{"member1": InClusterServer, "member2": "https://10.0.0.2:6443", "member3": "https://10.0.0.3:1"}}
	done := Rollout{Done: true, ReplicaSet: "kubectl-mcs-sync-abc"}
	lease := func(holder string, renewed time.Time, members ...snapshot.SyncViewedMember) *snapshot.Sync {
		s := &snapshot.Sync{Cluster: "member1", Namespace: DefaultNamespace, Holder: holder, Renewed: renewed, LeaseDuration: 15 * time.Second}
		if members != nil {
			s.View = &snapshot.SyncView{Members: members}
		}
		return s
	}
	reach := func(id string) snapshot.SyncViewedMember {
		return snapshot.SyncViewedMember{Cluster: id, State: snapshot.Reachable}
	}
	refused := snapshot.SyncViewedMember{Cluster: "member3", State: snapshot.Joining, Message: "dial tcp 10.0.0.3:1: connect: connection refused"}
	newPod := "kubectl-mcs-sync-abc-x1y2z_0f6e"
	rolling := `Waiting for deployment "kubectl-mcs-sync" rollout to finish: 1 of 2 updated replicas are available...`
	for _, tc := range []struct {
		name        string
		r           Rollout
		lease       *snapshot.Sync
		done        bool
		waiting     string
		unreachable []string
	}{
		{name: "rolling", r: Rollout{Message: "Waiting for deployment \"kubectl-mcs-sync\" rollout to finish: 1 of 2 updated replicas are available..."},
			waiting: "1 of 2 updated replicas are available"},
		{name: "rolling, an old pod leads", r: Rollout{Message: rolling, ReplicaSet: "kubectl-mcs-sync-abc"},
			lease: lease("kubectl-mcs-sync-old-a1b2c_9", now, reach("member1"), reach("member2"), refused), waiting: rolling},
		{name: "rolling, a new pod leads and cannot read member3", r: Rollout{Message: rolling, ReplicaSet: "kubectl-mcs-sync-abc"},
			lease:       lease(newPod, now, reach("member1"), reach("member2"), refused),
			waiting:     rolling + "; the leader kubectl-mcs-sync-abc-x1y2z does not read 1 of 3 members: member3 (joining)",
			unreachable: []string{`cluster "member3": the sync pods in "member1" cannot read it at https://10.0.0.3:1: dial tcp 10.0.0.3:1: connect: connection refused`}},
		{name: "rolling, a new pod reads every member", r: Rollout{Message: rolling, ReplicaSet: "kubectl-mcs-sync-abc"},
			lease: lease(newPod, now, reach("member1"), reach("member2"), reach("member3")), waiting: rolling},
		{name: "no lease", r: done, waiting: `rolled out; no leader: no Lease kubectl-mcs-system/kubectl-mcs-sync in cluster "member1" yet`},
		{name: "released", r: done, lease: lease("", now), waiting: "nobody holds the Lease"},
		{name: "new replicaset unknown", r: Rollout{Done: true}, lease: lease(newPod, now), waiting: "new replicaset"},
		{name: "an old pod leads", r: done, lease: lease("kubectl-mcs-sync-old-a1b2c_9", now, reach("member1"), reach("member2"), reach("member3")),
			waiting: `no pod of replicaset "kubectl-mcs-sync-abc" leads yet (the Lease in cluster "member1" is held by kubectl-mcs-sync-old-a1b2c)`},
		{name: "a replicaset whose name extends the new one's", r: done, lease: lease("kubectl-mcs-sync-abcd-x1y2z_0", now, reach("member1")),
			waiting: "no pod of replicaset"},
		{name: "stale", r: done, lease: lease(newPod, now.Add(-time.Minute), reach("member1"), reach("member2"), reach("member3")),
			waiting: "has not renewed its Lease since 2025-01-01T11:59:00Z"},
		{name: "no view", r: done, lease: lease(newPod, now), waiting: "has not reported what it reads yet"},
		{name: "member3 refused", r: done, lease: lease(newPod, now, reach("member1"), reach("member2"), refused),
			waiting:     "rolled out; the leader kubectl-mcs-sync-abc-x1y2z does not read 1 of 3 members: member3 (joining)",
			unreachable: []string{`cluster "member3": the sync pods in "member1" cannot read it at https://10.0.0.3:1: dial tcp 10.0.0.3:1: connect: connection refused`}},
		{name: "a member not reported", r: done, lease: lease(newPod, now, reach("member1"), reach("member2")),
			waiting: "member3 (not reported)"},
		{name: "unreachable without a message", r: done, lease: lease(newPod, now, reach("member1"), reach("member2"),
			snapshot.SyncViewedMember{Cluster: "member3", State: snapshot.Unreachable}),
			waiting:     "member3 (unreachable)",
			unreachable: []string{`cluster "member3": the sync pods in "member1" cannot read it at https://10.0.0.3:1: no error reported yet`}},
		{name: "every member read", r: done, lease: lease(newPod, now.Add(-5*time.Second), reach("member1"), reach("member2"), reach("member3")), done: true},
		{name: "a member beyond the clusterset is no matter", r: done, lease: lease(newPod, now, reach("member1"), reach("member2"), reach("member3"),
			snapshot.SyncViewedMember{Cluster: "member9", State: snapshot.Unreachable}), done: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(site, tc.r, tc.lease, now)
			if v.Done != tc.done || !strings.Contains(v.Waiting, tc.waiting) || (tc.done && v.Waiting != "") {
				t.Errorf("got done=%v waiting %q; want done=%v waiting %q", v.Done, v.Waiting, tc.done, tc.waiting)
			}
			if strings.Join(v.Unreachable, "\n") != strings.Join(tc.unreachable, "\n") {
				t.Errorf("unreachable:\n got %q\nwant %q", v.Unreachable, tc.unreachable)
			}
		})
	}
}

func TestTimedOut(t *testing.T) {
	sites := []Site{{Cluster: "member1"}, {Cluster: "member2"}, {Cluster: "member3"}}
	unreachable := `cluster "member3": the sync pods in "member2" cannot read it at https://10.0.0.3:1: connection refused`
	err := TimedOut(time.Minute, sites, []Verdict{{Done: true},
		{Waiting: "rolled out; the leader p does not read 1 of 3 members: member3 (joining)", Unreachable: []string{unreachable}},
		{Waiting: `Waiting for deployment "kubectl-mcs-sync" rollout to finish: 0 of 2 updated replicas are available...`}})
	want := "timed out after 1m0s waiting for the sync: 1 member(s) not reachable from its pods (fix the address with --member-server=CTX=URL and run install again):\n" +
		"  " + unreachable + "\n" +
		`  sync in "member3": Waiting for deployment "kubectl-mcs-sync" rollout to finish: 0 of 2 updated replicas are available...`
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
	err = TimedOut(time.Minute, sites[:1], []Verdict{{Waiting: "rolled out; no leader: nobody holds the Lease in cluster \"member1\""}})
	if want := "timed out after 1m0s waiting for the sync:\n  sync in \"member1\": rolled out; no leader: nobody holds the Lease in cluster \"member1\""; err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}
