//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Where sync is installed, diagnose checks the permissions of its ServiceAccount, not those of
// whoever runs diagnose: the bed's admin may do everything, and the ServiceAccount, once one verb
// is taken from its ClusterRole, may not; the fix is install again.
func TestDiagnoseChecksTheInstalledIdentity(t *testing.T) {
	t.Cleanup(func() { uninstall(t) })
	mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", memberServers(t, members...), noWait)
	ns := namespace(t, "e2e-diagid", members...)
	rbacOf := func(rep *diagnose.Report) map[string]diagnose.Result {
		out := map[string]diagnose.Result{}
		for _, r := range rep.Results {
			if r.Check == diagnose.CheckRBAC {
				out[r.Cluster] = r
			}
		}
		return out
	}
	const as = "the installed sync's ServiceAccount kubectl-mcs-system/kubectl-mcs-sync"
	rep, _ := diagnoseJSON(t, "", ns, "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		if r := rbacOf(rep)[c]; r.Severity != diagnose.OK || !strings.Contains(r.Message, as) {
			t.Errorf("%s, installed: %s %q, want OK as %s", c, r.Severity, r.Message, as)
		}
	}

	var p rbac.Permission
	for _, q := range rbac.Permissions(rbac.SyncRules) {
		if rbac.SyncRules[q.Rule].Resource == "serviceimports" && q.Verb == "create" {
			p = q
		}
	}
	setRules(t, rbac.Without(rbac.SyncRules, p), p, ns, false)
	t.Cleanup(func() { setRules(t, rbac.SyncRules, p, ns, true) })
	rep, _ = diagnoseJSON(t, "", ns, "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		r := rbacOf(rep)[c]
		if r.Severity != diagnose.Fail || !strings.Contains(r.Message, as+": missing create serviceimports.multicluster.x-k8s.io") ||
			!strings.Contains(r.Fix, "kubectl mcs install") {
			t.Errorf("%s, create on serviceimports taken from the ServiceAccount: %s %q (fix %q)", c, r.Severity, r.Message, r.Fix)
		}
	}
}
