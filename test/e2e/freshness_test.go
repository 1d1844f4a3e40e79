//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// TestStaleCopies: with no sync running, a change to a source slice makes status show the
// service Degraded, naming the members with the stale copies and the source, and diagnose fail
// on it; one sync later both are healthy again.
func TestStaleCopies(t *testing.T) {
	ns := namespace(t, "e2e-fresh", members...)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	waitFor(t, "member1's endpoint", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 1 })
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	old := sourceIPs(t, "member1", ns, "serve")
	if l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers); item(t, l, "serve").Health != status.Healthy {
		t.Fatalf("after sync: %s %v", item(t, l, "serve").Health, item(t, l, "serve").Problems)
	}

	if out, err := runKubectl("member1", "-n", ns, "scale", "deployment", "serve", "--replicas=2"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitFor(t, "member1's slice to hold 2 ready endpoints", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 2 })
	added := slices.DeleteFunc(sourceIPs(t, "member1", ns, "serve"), func(ip string) bool { return slices.Contains(old, ip) })
	if len(added) != 1 {
		t.Fatalf("endpoints %v after %v", sourceIPs(t, "member1", ns, "serve"), old)
	}

	l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
	it := item(t, l, "serve")
	var problem string
	for _, p := range it.Problems {
		if strings.Contains(p, "out of date") {
			problem = p
		}
	}
	if it.Health != status.Degraded || !strings.Contains(problem, `The copies of "member1"'s endpoints in `) ||
		!strings.Contains(problem, `"member2", "member3" are out of date: 1 endpoint missing (`+added[0]+`); since `) ||
		!strings.Contains(problem, "the source slice's last change (managedFields)") {
		t.Errorf("health %s, problems %q", it.Health, it.Problems)
	}
	for _, cs := range it.Clusters {
		if len(cs.Copies) != 1 {
			t.Errorf("%s: copies %+v", cs.Cluster, cs.Copies)
			continue
		}
		c := cs.Copies[0]
		if c.Source != "member1" || c.State != status.CopiesStale || !slices.Equal(c.Missing, added) || len(c.Extra)+len(c.OtherState) != 0 ||
			c.Since == nil || c.SinceFrom != status.SinceSourceChanged {
			t.Errorf("%s: copies %+v", cs.Cluster, c)
		}
	}

	rep, r := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
	if r.code != 1 {
		t.Errorf("diagnose exit %d, want 1", r.code)
	}
	if !hasResult(rep, diagnose.CheckSync, "", diagnose.Warn, "no sync runs in the clusterset") {
		t.Errorf("diagnose with stale copies and no sync running does not say so:\n%s", failures(rep))
	}
	for _, c := range []string{"member2", "member3"} {
		wantFailure(t, rep, diagnose.CheckFreshness, c, `the copies of "member1"'s endpoints here are out of date: 1 endpoint missing (`+added[0]+`)`,
			"check the sync that runs in the cluster:\nkubectl mcs sync -n "+ns+" --contexts=member1,member2,member3")
	}

	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	l, _ = statusJSON(t, "-n", ns, "--contexts", allMembers)
	if it := item(t, l, "serve"); it.Health != status.Healthy || it.Clusters[2].Copies[0].State != status.CopiesFresh {
		t.Errorf("after sync: %s %v %+v", it.Health, it.Problems, it.Clusters[2].Copies)
	}
	if rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers); rep.Summary.Failed != 0 || len(resultsOf(rep, diagnose.CheckFreshness)) != 3 {
		t.Errorf("after sync:\n%s", failures(rep))
	}
}

// resultsOf is the results of one check.
func resultsOf(rep *diagnose.Report, check string) []diagnose.Result {
	var out []diagnose.Result
	for _, x := range rep.Results {
		if x.Check == check {
			out = append(out, x)
		}
	}
	return out
}
