package diagnose

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// onlyFailures asserts that every failure or warning is check's, in the members named.
func onlyFailures(t *testing.T, r *Report, check string, members ...string) {
	t.Helper()
	var got []string
	for _, x := range r.Results {
		if x.Severity != OK {
			if x.Check != check {
				t.Errorf("unexpected %s %s %s: %s", x.Severity, x.Check, x.Cluster, x.Message)
			}
			got = append(got, x.Cluster)
		}
	}
	if strings.Join(got, ",") != strings.Join(members, ",") {
		t.Errorf("failures in %v, want %v:\n%s", got, members, failed(r))
	}
}

// Sync stopped, and member1's source went from no endpoint to two: every member's copy holds
// none. Only the freshness check sees it.
func TestStaleCopiesFail(t *testing.T) {
	s := healthy()
	changed := metav1.NewTime(now.Add(-3 * 60e9))
	for _, id := range []string{"member1", "member2", "member3"} {
		m := memberOf(s, id)
		for _, sl := range m.EndpointSlices {
			if sl.Labels["multicluster.kubernetes.io/source-cluster"] == "member1" {
				sl.Endpoints = nil
			}
		}
	}
	memberOf(s, "member1").EndpointSlices[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Time: &changed}}
	r := Run(s)
	onlyFailures(t, r, CheckFreshness, "member1", "member2", "member3")
	expectHas(t, r, CheckFreshness, "member3", Fail,
		`the copies of "member1"'s endpoints here are out of date: 2 endpoints missing (10.11.0.1; 10.11.0.2); since 2026-11-22T09:57:00Z, the source slice's last change (managedFields) (3m ago)`,
		"Run sync, which rewrites the copies that differ from their source, or check the sync that runs in the cluster. "+
			"The sync installed in \"member1\" runs and should have done so; its logs say why it has not:\n"+
			"kubectl mcs sync -n demo --contexts=member1,member2,member3\nkubectl --context member1 -n kubectl-mcs-system logs -l app.kubernetes.io/name=kubectl-mcs-sync --tail=50 --prefix")
	expectHas(t, r, CheckSlices, "member3", OK, `1 slice(s), 0 endpoint(s), all present in "member1"`, "")
}

func TestStaleCopyOtherState(t *testing.T) {
	s := healthy()
	memberOf(s, "member2").EndpointSlices[1].Endpoints[0].Conditions.Ready = ptr(false) // its copy of member1's
	r := Run(s)
	onlyFailures(t, r, CheckFreshness, "member2")
	expectHas(t, r, CheckFreshness, "member2", Fail, `1 endpoint in another state (10.11.0.1: ready=true in the source, ready=false in the copy)`, "kubectl mcs sync -n demo")
}

// An endpoint the source no longer has: import-slices names it as before, and the copy is stale.
func TestStaleCopyExtraEndpoint(t *testing.T) {
	s := healthy()
	c := memberOf(s, "member3").EndpointSlices[0]
	c.Endpoints = append(c.Endpoints, c.Endpoints[0])
	c.Endpoints[2].Addresses = []string{"10.11.0.99"}
	r := Run(s)
	expectHas(t, r, CheckSlices, "member3", Fail, "(50m old) holds 10.11.0.99, which \"member1\" no longer has", "replaces copies whose endpoints are gone")
	expectHas(t, r, CheckFreshness, "member3", Fail, `1 endpoint extra (10.11.0.99); since 2026-11-22T09:10:00Z, the copy's last change (managedFields)`, "kubectl mcs sync")
	if r.Summary.Failed != 2 {
		t.Errorf("failures:\n%s", failed(r))
	}
}

// A source that cannot be read is not stale: its copies are not compared, and pass.
func TestUnreadSourceCopiesNotCompared(t *testing.T) {
	s := healthy()
	m := memberOf(s, "member1")
	m.Cluster = snapshot.Cluster{ID: "member1", Context: "member1", State: snapshot.Unreachable, Message: "connection refused"}
	memberOf(s, "member3").EndpointSlices[0].Endpoints = nil // its copy of member1's, as if stale
	r := Run(s)
	expectHas(t, r, CheckFreshness, "member3", OK, `not compared: "member1" cannot be read`, "")
	for _, x := range only(r, CheckFreshness, "") {
		if x.Severity != OK {
			t.Errorf("%s %s: %s", x.Severity, x.Cluster, x.Message)
		}
	}
}
