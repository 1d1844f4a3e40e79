//go:build traffic

package traffic

// What only a sync in every member survives (make test-production with TRAFFIC_SYNC_MODE=
// per-member: install --mode=per-member), and the move between the two modes as
// docs/running-in-a-cluster.md gives it.

import (
	"fmt"
	"maps"
	"testing"
	"time"
)

func requirePerMember(t *testing.T) {
	t.Helper()
	requireProduction(t)
	if !perMember {
		t.Skip("a sync in every member only (TRAFFIC_SYNC_MODE=per-member)")
	}
}

// member1's whole control plane stops (its node paused, as a hung machine: its pods go on
// answering): member2 and member3 keep exchanging changes. An endpoint change in member3 reaches
// member2 within one round, and no request from member2 fails.
func TestProductionControlPlaneDown(t *testing.T) {
	requirePerMember(t)
	ns, name := served(t, "cpdown", "member1", "member3")
	before := readyAddresses(t, "member3", ns, "kubernetes.io/service-name=serve")

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	stopMember(t, "member1")
	down := time.Now()
	must(t, kubectl(nil, "member3", "-n", ns, "scale", "deployment/serve", "--replicas=2"), "scale serve in member3")
	changed, copied := propagationFrom(t, ns, "member3", before, consumer)
	t.Logf("member1 down: member3's change -> member2's copy %.1f s (down -> change %.1f s)",
		copied.Sub(changed).Seconds(), changed.Sub(down).Seconds())
	if d := copied.Sub(changed); d > syncRound {
		t.Errorf("with member1 down, member3's change reached member2 %s after it was made, more than a round (%s)", d, syncRound)
	}
	startMember(t, "member1")
	requests.expectNoFailure(t)
}

// member3's sync is scaled to 0 (its pods deleted, none to take over): only member3's imports
// wait. member1's endpoint change reaches member2 meanwhile, member3's copies keep every endpoint
// they held (none lost), and catch up once its sync runs again; no request from member2 fails.
func TestProductionMemberSyncDown(t *testing.T) {
	requirePerMember(t)
	ns, name := served(t, "syncdown", "member1")
	before := readyAddresses(t, "member1", ns, "kubernetes.io/service-name=serve")
	held := readyAddresses(t, "member3", ns, "multicluster.kubernetes.io/service-name=serve")

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	scaled := false
	t.Cleanup(func() {
		if !scaled {
			kubectl(nil, "member3", "-n", systemNS, "scale", "deployment/"+syncName, "--replicas=2")
		}
	})
	must(t, kubectl(nil, "member3", "-n", systemNS, "scale", "deployment/"+syncName, "--replicas=0"), "scale member3's sync to 0")
	eventually(t, 60*time.Second, "member3's sync pods gone", func() (bool, string) {
		r := kubectl(nil, "member3", "-n", systemNS, "get", "pods", "-l", "app.kubernetes.io/name="+syncName, "-o", "name")
		return r.code == 0 && r.stdout == "", r.stdout
	})
	must(t, kubectl(nil, "member1", "-n", ns, "scale", "deployment/serve", "--replicas=2"), "scale serve in member1")
	propagationFrom(t, ns, "member1", before, consumer)
	time.Sleep(syncRound)
	if now := readyAddresses(t, "member3", ns, "multicluster.kubernetes.io/service-name=serve"); !maps.Equal(now, held) {
		t.Errorf("member3, its sync down: copies %v, want what they held (%v)", now, held)
	}
	must(t, kubectl(nil, "member3", "-n", systemNS, "scale", "deployment/"+syncName, "--replicas=2"), "scale member3's sync to 2")
	scaled = true
	propagationFrom(t, ns, "member1", before, "member3")
	requests.expectNoFailure(t)
}

// The move from a sync in every member to one in the host and back, as the docs give it: no
// request fails, changes go on reaching every member in each mode, and nothing sync wrote is
// replaced.
func TestProductionModeChange(t *testing.T) {
	requirePerMember(t)
	ns, name := served(t, "move", "member1", "member3")
	uids := managedUIDs(t, ns)

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	for i, toPerMember := range []bool{false, true} {
		moveTo(t, toPerMember)
		before := readyAddresses(t, "member1", ns, "kubernetes.io/service-name=serve")
		must(t, kubectl(nil, "member1", "-n", ns, "scale", "deployment/serve", fmt.Sprintf("--replicas=%d", i+2)), "scale serve in member1")
		changed, copied := propagation(t, ns, before)
		t.Logf("per member %v: member1's change -> every copy %.1f s", toPerMember, copied.Sub(changed).Seconds())
	}
	requests.expectNoFailure(t)
	unchanged(t, uids, managedUIDs(t, ns))
}

// moveTo runs the steps of docs/running-in-a-cluster.md ("Moving between the modes"): install in
// the other mode (which waits for its rollout and its leaders), then delete what only the mode
// left behind used.
func moveTo(t *testing.T, toPerMember bool) {
	t.Helper()
	must(t, install(syncImage, toPerMember), "kubectl mcs install, per member "+fmt.Sprint(toPerMember))
	was := perMember
	perMember = toPerMember // syncMembers follows the mode
	t.Cleanup(func() { perMember = was })
	for _, c := range members {
		if toPerMember {
			must(t, kubectl(nil, c, "-n", systemNS, "delete", "secret", syncName+"-token", "--ignore-not-found"), c+": the host's token")
			continue
		}
		must(t, kubectl(nil, c, "delete", "clusterrolebinding,clusterrole", "-l", "app.kubernetes.io/component=reader", "--ignore-not-found"), c+": the readers' roles")
		must(t, kubectl(nil, c, "-n", systemNS, "delete", "serviceaccount,secret", "-l", "app.kubernetes.io/component=reader", "--ignore-not-found"), c+": the readers")
		if c != host {
			must(t, kubectl(nil, c, "-n", systemNS, "delete", "deployment,poddisruptionbudget", syncName, "--ignore-not-found"), c+": its own sync")
			must(t, kubectl(nil, c, "-n", systemNS, "delete", "secret", syncName+"-kubeconfigs", "--ignore-not-found"), c+": its kubeconfigs")
		}
	}
}
