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
	"k8s.io/apimachinery/pkg/types"
)

// zone labels a member's node with a zone (and, with extra, adds a bare Node of another zone),
// undone at the end.
func zone(t *testing.T, c, node, z string) {
	t.Helper()
	ctx := context.Background()
	n, err := clients[c].kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil && node != c+"-node" {
		n, err = clients[c].kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
		t.Cleanup(func() { _ = clients[c].kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}) })
	}
	if err != nil {
		t.Fatalf("%s: node %s: %v", c, node, err)
	}
	patch := `{"metadata":{"labels":{"` + corev1.LabelTopologyZone + `":"` + z + `"}}}`
	if _, err := clients[c].kube.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unset := `{"metadata":{"labels":{"` + corev1.LabelTopologyZone + `":null}}}`
		_, _ = clients[c].kube.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(unset), metav1.PatchOptions{})
	})
}

// hintsBySource is every endpoint's zone hints in c's copies of name, by source cluster: "-" for
// an endpoint without hints.
func hintsBySource(t *testing.T, c, ns, name string) map[string][]string {
	t.Helper()
	return slicesBySource(t, c, ns, name, func(s discoveryv1.EndpointSlice) []string {
		var out []string
		for _, e := range s.Endpoints {
			h := "-"
			if e.Hints != nil {
				var z []string
				for _, f := range e.Hints.ForZones {
					z = append(z, f.Name)
				}
				h = strings.Join(z, "+")
			}
			out = append(out, h)
		}
		return out
	})
}

// TestPreferSameCluster: member2's choice hints member2's copies alone, its own endpoints with
// its nodes' zones and member1's with a zone none of them has; someone else's hints are
// rewritten, a second sync changes nothing, and exposing again without the choice removes them.
// member1's choice, its node without a zone, is one note of status, naming it and why.
func TestPreferSameCluster(t *testing.T) {
	ns := namespace(t, "e2e-prefer", members...)
	// Zones first: the endpoint slice controller writes a node's zone into an endpoint when it
	// computes it, not when the node's label changes, and a copy carries it.
	zone(t, "member2", "member2-node", "zone-b")
	zone(t, "member2", "member2-hints-extra", "zone-a")
	zone(t, "member3", "member3-node", "zone-c")
	for _, c := range []string{"member1", "member2"} {
		deployment(t, c, ns, "serve", 2)
		service(t, c, ns, "serve")
		waitFor(t, c+"'s endpoints", func() bool { return len(sourceIPs(t, c, ns, "serve")) == 2 })
	}
	waitFor(t, "member2's endpoints with their zones", func() bool {
		l, err := clients["member2"].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=serve"})
		n := 0
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Zone == nil {
					return false
				}
				n++
			}
		}
		return err == nil && n == 2
	})
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	r := mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers, "--providers=member2", "--traffic-distribution=PreferSameCluster")
	if se := get(t, "member2", seGVR("v1beta1"), ns, "serve"); se.GetAnnotations()["mcs.kubectl.io/traffic-distribution"] != "PreferSameCluster" {
		t.Fatalf("member2's ServiceExport lacks the choice: %v\n%s", se.GetAnnotations(), r.stdout)
	}
	if se := get(t, "member1", seGVR("v1beta1"), ns, "serve"); len(se.GetAnnotations()) > 0 {
		t.Fatalf("member1's ServiceExport annotated: %v", se.GetAnnotations())
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)

	want := map[string]map[string][]string{
		"member1": {"member1": {"-", "-"}, "member2": {"-", "-"}},
		"member2": {"member1": {"kubectl-mcs-other-cluster", "kubectl-mcs-other-cluster"}, "member2": {"zone-a+zone-b", "zone-a+zone-b"}},
		"member3": {"member1": {"-", "-"}, "member2": {"-", "-"}},
	}
	check := func(when string, want map[string]map[string][]string) {
		t.Helper()
		for c, w := range want {
			got := hintsBySource(t, c, ns, "serve")
			for src := range w {
				if !slices.Equal(got[src], w[src]) {
					t.Errorf("%s: %s's copies of %s's endpoints hinted %q, want %q", when, c, src, got[src], w[src])
				}
			}
		}
	}
	check("member2 prefers its own", want)
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("a second sync changed something:\n%s", r.stdout)
	}

	// Someone else's hints, in a member with the choice and in one without: rewritten.
	for _, c := range []string{"member2", "member3"} {
		l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "multicluster.kubernetes.io/service-name=serve"})
		if err != nil || len(l.Items) == 0 {
			t.Fatalf("%s: copies: %v", c, err)
		}
		if out, err := runKubectl(c, "-n", ns, "patch", "endpointslice", l.Items[0].Name, "--type=json", "--field-manager=someone-else",
			`-p=[{"op":"add","path":"/endpoints/0/hints","value":{"forZones":[{"name":"elsewhere"}]}}]`); err != nil {
			t.Fatalf("%s: %v: %s", c, err, out)
		}
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "2 updated (EndpointSlice 2)") {
		t.Errorf("the hand-edited copies were not rewritten:\n%s", r.stdout)
	}
	check("after someone else's hints", want)

	// member1 asks too, its node without a zone: status says so in one line, and -o json.
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers, "--providers=member1", "--traffic-distribution=PreferSameCluster")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	check("member1's choice without effect", want)
	out := mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers).stdout
	line := `cluster "member1": PreferSameCluster has no effect: none of its nodes has a topology.kubernetes.io/zone label.`
	if strings.Count(out, "cluster \"member") != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), line) {
		t.Errorf("status: want the one line %q in:\n%s", line, out)
	}
	var doc struct {
		Items []struct {
			Notes    []string `json:"notes"`
			Clusters []struct {
				Cluster             string `json:"cluster"`
				TrafficDistribution *struct {
					Value     string   `json:"value"`
					Effective bool     `json:"effective"`
					Zones     []string `json:"zones"`
				} `json:"trafficDistribution"`
			} `json:"clusters"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers, "-o", "json").stdout), &doc); err != nil || len(doc.Items) != 1 {
		t.Fatalf("status -o json: %v", err)
	}
	for _, c := range doc.Items[0].Clusters {
		td := c.TrafficDistribution
		switch c.Cluster {
		case "member1":
			if td == nil || td.Value != "PreferSameCluster" || td.Effective {
				t.Errorf("json: member1's choice %+v, want PreferSameCluster without effect", td)
			}
		case "member2":
			if td == nil || !td.Effective || !slices.Equal(td.Zones, []string{"zone-a", "zone-b"}) {
				t.Errorf("json: member2's choice %+v, want in effect for zone-a, zone-b", td)
			}
		default:
			if td != nil {
				t.Errorf("json: %s has a choice: %+v", c.Cluster, td)
			}
		}
	}

	// Exposed again without the flag: the choice and every hint go.
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	if se := get(t, "member2", seGVR("v1beta1"), ns, "serve"); len(se.GetAnnotations()) > 0 {
		t.Fatalf("member2's ServiceExport keeps %v", se.GetAnnotations())
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	want["member2"] = map[string][]string{"member1": {"-", "-"}, "member2": {"-", "-"}}
	check("the choice removed", want)
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("a sync after the removal changed something:\n%s", r.stdout)
	}
}
