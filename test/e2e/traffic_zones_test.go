//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
)

// zonedEndpoints waits until c's own endpoints of name are n, each with a zone.
func zonedEndpoints(t *testing.T, c, ns, name string, n int) {
	t.Helper()
	waitFor(t, c+"'s endpoints with their zones", func() bool {
		l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		got := 0
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Zone == nil {
					return false
				}
				got++
			}
		}
		return err == nil && got == n
	})
}

// hintsAreZones is every endpoint of c's copies of name by source cluster: its zone hints, "="
// and its zone ("-" for none of either).
func hintsAreZones(t *testing.T, c, ns, name string) map[string][]string {
	t.Helper()
	hints := hintsBySource(t, c, ns, name)
	zones := slicesBySource(t, c, ns, name, func(s discoveryv1.EndpointSlice) []string {
		var out []string
		for _, e := range s.Endpoints {
			z := "-"
			if e.Zone != nil {
				z = *e.Zone
			}
			out = append(out, z)
		}
		return out
	})
	out := map[string][]string{}
	for src := range hints {
		for i := range hints[src] {
			out[src] = append(out[src], hints[src][i]+"="+zones[src][i])
		}
	}
	return out
}

// serveStatus is what status -o json says of the service's trafficDistribution.
type serveStatus struct {
	Notes               []string `json:"notes"`
	TrafficDistribution *struct {
		Value     string `json:"value"`
		Effective bool   `json:"effective"`
		Message   string `json:"message"`
	} `json:"trafficDistribution"`
}

// TestServiceTrafficDistribution: the exported Service's trafficDistribution PreferClose hints
// every endpoint of every copy, in every member, with its own zone, and a second sync changes
// nothing. An exporting member whose endpoint has no zone takes every hint away, which status
// (text and json) and diagnose say in one line naming the service and that member; once its
// endpoint has a zone the hints are back. member2's PreferSameCluster wins for member2's copies.
// Without trafficDistribution, no hints.
func TestServiceTrafficDistribution(t *testing.T) {
	ns := namespace(t, "e2e-tdzones", members...)
	// Zones first: the endpoint slice controller writes an endpoint's zone when it computes it.
	zone(t, "member1", "member1-node", "zone-a")
	zone(t, "member2", "member2-node", "zone-b")
	preferClose := func(s *corev1.Service) { td := "PreferClose"; s.Spec.TrafficDistribution = &td }
	for _, c := range []string{"member1", "member2"} {
		deployment(t, c, ns, "serve", 2)
		service(t, c, ns, "serve", preferClose)
		zonedEndpoints(t, c, ns, "serve", 2)
	}
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)

	check := func(when string, want map[string]map[string][]string) {
		t.Helper()
		for _, c := range members {
			got := hintsAreZones(t, c, ns, "serve")
			w := want[c]
			if w == nil {
				w = want["*"]
			}
			for src := range w {
				if !slices.Equal(got[src], w[src]) {
					t.Errorf("%s: %s's copies of %s's endpoints: hints=zone %q, want %q", when, c, src, got[src], w[src])
				}
			}
			if len(got) != len(w) {
				t.Errorf("%s: %s holds copies of %d sources, want %d: %q", when, c, len(got), len(w), got)
			}
		}
	}
	hinted := map[string]map[string][]string{"*": {"member1": {"zone-a=zone-a", "zone-a=zone-a"}, "member2": {"zone-b=zone-b", "zone-b=zone-b"}}}
	check("PreferClose", hinted)
	noChanges := func(when string) {
		t.Helper()
		if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "No changes.") {
			t.Errorf("%s: a second sync changed something:\n%s", when, r.stdout)
		}
	}
	noChanges("PreferClose")
	jsonStatus := func() serveStatus {
		t.Helper()
		var doc struct{ Items []serveStatus }
		if err := json.Unmarshal([]byte(mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers, "-o", "json").stdout), &doc); err != nil || len(doc.Items) != 1 {
			t.Fatalf("status -o json: %v", err)
		}
		return doc.Items[0]
	}
	if s := jsonStatus(); s.TrafficDistribution == nil || s.TrafficDistribution.Value != "PreferClose" || !s.TrafficDistribution.Effective || len(s.Notes) != 0 {
		t.Errorf("json: trafficDistribution %+v, notes %q; want PreferClose in effect, no note", s.TrafficDistribution, s.Notes)
	}

	// member3 exports it too, from a node without a zone: no copy is hinted, and status says why.
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve", preferClose)
	waitFor(t, "member3's endpoint", func() bool { return len(sourceIPs(t, "member3", ns, "serve")) == 1 })
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	unhinted := map[string]map[string][]string{"*": {"member1": {"-=zone-a", "-=zone-a"}, "member2": {"-=zone-b", "-=zone-b"}, "member3": {"-=-"}}}
	check("an endpoint without a zone", unhinted)
	noChanges("an endpoint without a zone")
	line := "service " + ns + `/serve: trafficDistribution PreferClose is not carried across clusters: endpoints of "member3" (1 of 1) have no zone.`
	out := mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers).stdout
	if strings.Count(out, "trafficDistribution") != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), line) {
		t.Errorf("status: want the one line %q in:\n%s", line, out)
	}
	if s := jsonStatus(); s.TrafficDistribution == nil || s.TrafficDistribution.Effective || len(s.Notes) != 1 || s.Notes[0] != line {
		t.Errorf("json: trafficDistribution %+v, notes %q; want PreferClose without effect, the one note", s.TrafficDistribution, s.Notes)
	}
	rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
	warned := 0
	for _, x := range rep.Results {
		if x.Check == diagnose.CheckTraffic {
			if x.Severity != diagnose.Warn || x.Object != "service/"+ns+"/serve" || !strings.Contains(x.Message, `"member3" (1 of 1) have no zone`) {
				t.Errorf("diagnose: %+v", x)
			}
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("diagnose: %d traffic-distribution results, want 1:\n%s", warned, failures(rep))
	}

	// member3's node gets a zone and its pod is made again: the hints are back, member3's too.
	zone(t, "member3", "member3-node", "zone-c")
	if out, err := runKubectl("member3", "-n", ns, "delete", "pod", "-l", "app=serve"); err != nil {
		t.Fatalf("member3: %v: %s", err, out)
	}
	zonedEndpoints(t, "member3", ns, "serve", 1)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	hinted["*"]["member3"] = []string{"zone-c=zone-c"}
	check("member3's endpoint zoned", hinted)
	noChanges("member3's endpoint zoned")
	if s := jsonStatus(); s.TrafficDistribution == nil || !s.TrafficDistribution.Effective || len(s.Notes) != 0 {
		t.Errorf("json: trafficDistribution %+v, notes %q; want in effect, no note", s.TrafficDistribution, s.Notes)
	}

	// member2 prefers its own cluster: its copies carry that choice's hints, the others' the zones.
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers, "--providers=member2", "--traffic-distribution=PreferSameCluster")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	other := "kubectl-mcs-other-cluster"
	check("member2 prefers its own", map[string]map[string][]string{
		"*":       hinted["*"],
		"member2": {"member1": {other + "=zone-a", other + "=zone-a"}, "member2": {"zone-b=zone-b", "zone-b=zone-b"}, "member3": {other + "=zone-c"}},
	})
	noChanges("member2 prefers its own")
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	check("member2's choice removed", hinted)

	// trafficDistribution removed from every Service: every hint goes.
	for _, c := range members {
		if out, err := runKubectl(c, "-n", ns, "patch", "service", "serve", "--type=json", `-p=[{"op":"remove","path":"/spec/trafficDistribution"}]`); err != nil {
			t.Fatalf("%s: %v: %s", c, err, out)
		}
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	unhinted["*"]["member3"] = []string{"-=zone-c"}
	check("trafficDistribution removed", unhinted)
	noChanges("trafficDistribution removed")
	if s := jsonStatus(); s.TrafficDistribution != nil || len(s.Notes) != 0 {
		t.Errorf("json: trafficDistribution %+v, notes %q; want none", s.TrafficDistribution, s.Notes)
	}
}
