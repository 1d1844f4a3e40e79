//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// A sync whose identity may not list or watch nodes (installed before the nodes rule, and not
// installed again) still joins every member and imports: only PreferSameCluster choices wait for
// the zones, and it says so.
func TestSyncWatchWithoutNodeRights(t *testing.T) {
	t.Cleanup(func() { uninstall(t) })
	inst := generate(t)
	ns := namespace(t, "e2e-nonodes", members...)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	userExport(t, "member1", ns, "serve")

	rules := rbac.SyncRules
	var last rbac.Permission
	for _, verb := range []string{"list", "watch"} {
		for _, p := range rbac.Permissions(rules) {
			if rules[p.Rule].Resource == "nodes" && p.Verb == verb {
				rules, last = rbac.Without(rules, p), p
				break
			}
		}
	}
	if len(rbac.Permissions(rules)) != len(rbac.Permissions(rbac.SyncRules))-2 {
		t.Fatalf("the nodes rule's list and watch not found in rbac.SyncRules")
	}
	setRules(t, rules, last, ns, false)
	t.Cleanup(func() { setRules(t, rbac.SyncRules, last, ns, true) })

	w := startAsSA(t, inst, nil, "sync", "--watch", "-n", ns, "--contexts", allMembers)
	waitFor(t, "serve imported in member2 by a sync that may not read nodes", func() bool {
		return len(importedIPs(t, "member2", ns, "serve", "member1")) == 1
	})
	waitFor(t, "sync to say the nodes are not readable", func() bool { return strings.Contains(w.out.String(), "nodes not readable") })
}
