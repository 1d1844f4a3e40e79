//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// TestSyncSaysWhatItSees: a sync --watch --leader-elect publishes its view on its Lease (kube-system
// of member1): status prints a line for it and warns, as does diagnose, of a member it cannot
// read; once it stops (a sync run by hand, its Lease released), diagnose says no sync runs.
func TestSyncSaysWhatItSees(t *testing.T) {
	ns := seedService(t, "e2e-view")
	w := startWatch(t, ns, "--leader-elect")
	ours := func(l *status.MultiClusterServiceStatusList) *status.SyncStatus {
		for i, s := range l.Syncs {
			if s.Cluster == "member1" && s.Namespace == "kube-system" && !s.Stale && s.Reported {
				return &l.Syncs[i]
			}
		}
		return nil
	}
	waitFor(t, "status to show the running sync", func() bool {
		l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
		s := ours(l)
		return s != nil && s.Leader != "" && len(s.Unreachable) == 0
	})
	if r := mustMCS(t, "status", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stderr, `Sync in "member1" (kube-system): `) ||
		!strings.Contains(r.stderr, "for the clusterset") {
		t.Errorf("status stderr:\n%s", r.stderr)
	}

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	waitFor(t, "the sync's view to name member3 unreachable", func() bool {
		l, _ := statusJSON(t, "-n", ns, "--contexts", "member1,member2")
		s := ours(l)
		return s != nil && len(s.Unreachable) == 1 && s.Unreachable[0].Cluster == "member3"
	})
	if r := mustMCS(t, "status", "-n", ns, "--contexts", "member1,member2"); !strings.Contains(r.stderr, `Warning: the sync in "member1" cannot read cluster "member3" (unreachable)`) {
		t.Errorf("status stderr with member3 down:\n%s", r.stderr)
	}
	rep := diagnoseReport(t, "serve", "-n", ns, "--contexts", "member1,member2")
	if !hasResult(rep, diagnose.CheckSync, "member1", diagnose.Warn, `cannot read cluster "member3"`) {
		t.Errorf("diagnose with member3 down:\n%s", failures(rep))
	}
	testbed(t, "start", "member3")
	restarted = true

	if err := w.terminate(t); err != nil {
		t.Logf("sync --watch exited: %v", err)
	}
	rep = diagnoseReport(t, "serve", "-n", ns, "--contexts", allMembers)
	if !hasResult(rep, diagnose.CheckSync, "", diagnose.OK, "no sync runs in the clusterset") {
		t.Errorf("diagnose once the sync stopped:\n%s", failures(rep))
	}
}

// diagnoseReport is diagnose -o json's report. Unlike diagnoseJSON, it does not hold the members
// unchanged meanwhile: the running sync renews its Lease.
func diagnoseReport(t *testing.T, args ...string) *diagnose.Report {
	t.Helper()
	r := mcs(append([]string{"diagnose", "-o", "json"}, args...)...)
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("diagnose -o json: exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	return &rep
}

// hasResult says whether the report has a result of check in cluster, of severity sev, whose
// message holds text.
func hasResult(rep *diagnose.Report, check, cluster string, sev diagnose.Severity, text string) bool {
	for _, x := range rep.Results {
		if x.Check == check && x.Cluster == cluster && x.Severity == sev && strings.Contains(x.Message, text) {
			return true
		}
	}
	return false
}
