package status

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func TestSyncLines(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	view := &snapshot.SyncView{Local: "member2", Members: []snapshot.SyncViewedMember{
		{Cluster: "member1", State: snapshot.Reachable}, {Cluster: "member3", State: snapshot.Unreachable, Message: "connection refused"}}}
	clusters := []snapshot.Cluster{
		{ID: "member1", Syncs: []snapshot.Sync{{Cluster: "member1", Namespace: "kubectl-mcs-system", Holder: "sync-a_1", Renewed: now.Add(-time.Hour), LeaseDuration: 15 * time.Second}}},
		{ID: "member2", Syncs: []snapshot.Sync{{Cluster: "member2", Namespace: "kubectl-mcs-system", Holder: "sync-b_2", Renewed: now.Add(-3 * time.Second), LeaseDuration: 15 * time.Second, View: view}}},
	}
	syncs := Syncs(clusters, now)
	if len(syncs) != 2 || !syncs[0].Stale || syncs[1].Stale || syncs[1].Leader != "sync-b" || syncs[1].Local != "member2" || len(syncs[1].Unreachable) != 1 {
		t.Fatalf("syncs %+v", syncs)
	}
	lines, warnings := SyncLines(syncs, now)
	want := []string{
		`Sync in "member1" (kubectl-mcs-system): sync-a leads, renewed 1h0m0s ago, for the clusterset`,
		`Sync in "member2" (kubectl-mcs-system): sync-b leads, renewed 3s ago, for "member2" alone`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], `the sync in "member1" has not renewed its Lease for 1h0m0s: it is not running`) ||
		warnings[1] != `the sync in "member2" cannot read cluster "member3" (unreachable): connection refused` {
		t.Errorf("warnings %q", warnings)
	}
}
