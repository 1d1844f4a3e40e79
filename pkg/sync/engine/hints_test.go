package engine

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// The fuzzers' members: cluster a's node has no zone, b's two are in two zones, c has a zoned
// and an unzoned node, d's nodes are in more zones than hints may name.
func fuzzTopology(ci int) *snapshot.Topology {
	switch ci % 4 {
	case 0:
		return snapshot.NewTopology(map[string]string{"n1": ""})
	case 1:
		return snapshot.NewTopology(map[string]string{"n1": "z1", "n2": "z2"})
	case 2:
		return snapshot.NewTopology(map[string]string{"n1": "z1", "n2": ""})
	}
	zones := map[string]string{}
	for i := range MaxZoneHints + 1 {
		zones[fmt.Sprint("n", i)] = fmt.Sprint("z", i)
	}
	return snapshot.NewTopology(zones)
}

// fuzzChoice: every export of s2 prefers its own cluster, none of s1.
func fuzzChoice(name string) map[string]string { return withChoice(nil, name) }

func withChoice(a map[string]string, name string) map[string]string {
	if name != "s2" {
		return a
	}
	a = maps.Clone(a)
	if a == nil {
		a = map[string]string{}
	}
	a[names.TrafficDistributionAnnotation] = names.PreferSameCluster
	return a
}

// foreignHints: another writer hints the first endpoint of a copy of name for a zone of its own.
func (s *fakeServer) foreignHints(name string) error {
	for _, k := range sortedObjKeys(s.objs[snapshot.KindEndpointSlice]) {
		u := s.objs[snapshot.KindEndpointSlice][k]
		eps, _, _ := unstructured.NestedSlice(u.Object, "endpoints")
		if u.GetLabels()[mcsv1beta1.LabelServiceName] != name || !names.IsManaged(u.GetLabels()) || len(eps) == 0 {
			continue
		}
		u = u.DeepCopy()
		eps[0].(map[string]any)["hints"] = map[string]any{"forZones": []any{map[string]any{"name": "foreign"}}}
		if err := unstructured.SetNestedSlice(u.Object, eps, "endpoints"); err != nil {
			return err
		}
		return s.update(snapshot.KindEndpointSlice, u, otherManager+"-hints")
	}
	return nil
}

// checkHints: a member's copies carry exactly the hints its choice gives them, else those of the
// service's trafficDistribution (checkCopyHints); obs is the clusterset as sync reads it.
func checkHints(t *testing.T, s *fakeServer, obs Observed) {
	t.Helper()
	bySvc := map[key][]*discoveryv1.EndpointSlice{}
	for _, k := range sortedObjKeys(s.objs[snapshot.KindEndpointSlice]) {
		u := s.objs[snapshot.KindEndpointSlice][k]
		if !names.IsManaged(u.GetLabels()) {
			continue
		}
		sl := fromUnstructured[discoveryv1.EndpointSlice](u)
		svc := key{Namespace: sl.Namespace, Name: sl.Labels[mcsv1beta1.LabelServiceName]}
		bySvc[svc] = append(bySvc[svc], sl)
	}
	for svc, copies := range bySvc {
		var exp *mcsv1beta1.ServiceExport
		if e := s.objs[snapshot.KindServiceExport][svc]; e != nil {
			exp = fromUnstructured[mcsv1beta1.ServiceExport](e)
		}
		checkCopyHints(t, s.id, ChoiceOf(exp, s.topology), oldestTD(obs, svc), copies)
	}
}

func hintZones(e discoveryv1.Endpoint) []string {
	if e.Hints == nil {
		return nil
	}
	var out []string
	for _, z := range e.Hints.ForZones {
		out = append(out, z.Name)
	}
	return out
}

func withTopology(c ObservedCluster, zones map[string]string) ObservedCluster {
	c.Topology = snapshot.NewTopology(zones)
	return c
}

func preferring(e *mcsv1beta1.ServiceExport) *mcsv1beta1.ServiceExport {
	e.Annotations = map[string]string{names.TrafficDistributionAnnotation: names.PreferSameCluster}
	return e
}

// TestPreferSameClusterHints: in the member that asks, its own endpoints are hinted with its
// nodes' zones and the others' with a zone none of its nodes has; elsewhere nothing is hinted.
func TestPreferSameClusterHints(t *testing.T) {
	zones := map[string]string{"n1": "zone-b", "n2": "zone-a", "n3": "zone-b", "n4": ""}
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		withTopology(member("m1", mkExport("demo", "web", 1), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.1.0.1")), zones),
		withTopology(member("m2", preferring(mkExport("demo", "web", 2)), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.2.0.1", "10.2.0.2")), zones),
		withTopology(member("m3"), zones),
	}}
	d := Compute(obs)
	for id, cd := range d.Clusters {
		if len(cd.EndpointSlices) != 2 {
			t.Fatalf("%s: %d copies, want 2", id, len(cd.EndpointSlices))
		}
		for _, s := range cd.EndpointSlices {
			var want []string
			if id == "m2" {
				want = []string{OtherClusterZone}
				if s.Labels[mcsv1beta1.LabelSourceCluster] == "m2" {
					want = []string{"zone-a", "zone-b"}
				}
			}
			for _, e := range s.Endpoints {
				if got := hintZones(e); !slices.Equal(got, want) {
					t.Errorf("%s: copy of %s: endpoint %v hinted %q, want %q", id, s.Labels[mcsv1beta1.LabelSourceCluster], e.Addresses, got, want)
				}
			}
		}
	}
	conv := cloneObs(obs)
	if n, left := converge(&conv, 6); len(left) != 0 {
		t.Fatalf("not converged after %d passes: %q", n, summary(left))
	}
	if left := Plan(digestCopies(conv), Compute(conv)); len(left) != 0 {
		t.Fatalf("not converged with the copies as digests: %q", summary(left))
	}

	// Someone else's hints on a copy, in a member with the choice and in one without, are
	// rewritten.
	for _, id := range []string{"m1", "m2"} {
		edited := cloneObs(conv)
		for i := range edited.Clusters {
			if edited.Clusters[i].ID != id {
				continue
			}
			for _, s := range edited.Clusters[i].EndpointSlices {
				if names.IsManaged(s.Labels) {
					s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "elsewhere"}}}
					break
				}
			}
		}
		if got := summary(Plan(digestCopies(edited), Compute(edited))); len(got) != 1 {
			t.Errorf("%s: a copy with someone else's hints: plan %q, want its update alone", id, got)
		}
	}

	// The choice removed: every copy of m2 loses its hints, and nothing else is written.
	gone := cloneObs(conv)
	for i := range gone.Clusters {
		for _, e := range gone.Clusters[i].ServiceExports {
			e.Annotations = nil
		}
	}
	acts := Plan(gone, Compute(gone))
	for _, a := range acts {
		if a.Cluster != "m2" || a.Kind != snapshot.KindEndpointSlice || a.Verb != VerbUpdate {
			t.Errorf("choice removed: unexpected %s %s %s/%s in %s", a.Verb, a.Kind, a.Namespace, a.Name, a.Cluster)
			continue
		}
		for _, e := range a.Object.(*discoveryv1.EndpointSlice).Endpoints {
			if e.Hints != nil {
				t.Errorf("choice removed: %s still hinted", a.Name)
			}
		}
	}
	if len(acts) != 2 {
		t.Errorf("choice removed: %d writes, want m2's 2 copies", len(acts))
	}
}

// TestPreferSameClusterHintsHeadless: a Headless service's copies are hinted alike. kube-proxy
// has no use for them, but the member's DNS server answers the clusterset name from them
// (pkg/dnszone): its own endpoints while one is ready.
func TestPreferSameClusterHintsHeadless(t *testing.T) {
	zones := map[string]string{"n1": "zone-a"}
	headless := func(s *corev1.Service) *corev1.Service { s.Spec.ClusterIP = corev1.ClusterIPNone; return s }
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		withTopology(member("m1", mkExport("demo", "db", 1), headless(mkService("demo", "db")), mkSlice("demo", "db", "db-1", "10.1.0.1")), zones),
		withTopology(member("m2", preferring(mkExport("demo", "db", 2)), headless(mkService("demo", "db")), mkSlice("demo", "db", "db-1", "10.2.0.1")), zones),
	}}
	want := map[string][]string{"m1": {OtherClusterZone}, "m2": {"zone-a"}}
	cd := Compute(obs).Clusters["m2"]
	if len(cd.EndpointSlices) != 2 || cd.Services[0].Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("m2: %d copies of a derived Service of cluster IP %q, want 2 of a Headless one", len(cd.EndpointSlices), cd.Services[0].Spec.ClusterIP)
	}
	for _, s := range cd.EndpointSlices {
		src := s.Labels[mcsv1beta1.LabelSourceCluster]
		if got := hintZones(s.Endpoints[0]); !slices.Equal(got, want[src]) {
			t.Errorf("m2: copy of %s's endpoints hinted %q, want %q", src, got, want[src])
		}
	}
}

// TestChoiceOf: when the choice cannot take effect, it says why, naming nothing it could not know.
func TestChoiceOf(t *testing.T) {
	exp := preferring(mkExport("demo", "web", 1))
	many := map[string]string{}
	for i := range MaxZoneHints + 1 {
		many[fmt.Sprint("n", i)] = fmt.Sprint("z", i)
	}
	for _, tc := range []struct {
		name      string
		exp       *mcsv1beta1.ServiceExport
		zones     map[string]string // nil: not read
		effective bool
		message   string
	}{
		{"no choice", mkExport("demo", "web", 1), map[string]string{"n1": "a"}, false, ""},
		{"zoned", exp, map[string]string{"n1": "a", "n2": "a"}, true, ""},
		{"some unzoned", exp, map[string]string{"n1": "a", "n2": ""}, true, "1 of its 2 nodes have no topology.kubernetes.io/zone label: pods there use every cluster's endpoints"},
		{"unzoned", exp, map[string]string{"n1": ""}, false, "PreferSameCluster has no effect: none of its nodes has a topology.kubernetes.io/zone label"},
		{"no nodes", exp, map[string]string{}, false, "PreferSameCluster has no effect: none of its nodes has a topology.kubernetes.io/zone label"},
		{"too many zones", exp, many, false, "PreferSameCluster has no effect: its nodes are in 9 zones, more than the 8 an endpoint's hints may name"},
		{"the sentinel", exp, map[string]string{"n1": OtherClusterZone}, false, "PreferSameCluster has no effect: a node's zone is kubectl-mcs-other-cluster, the hint of the other clusters' endpoints"},
		{"not read", exp, nil, false, "whether PreferSameCluster takes effect is unknown: its nodes' zones were not read (that needs list on nodes)"},
		{"unknown value", &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{names.TrafficDistributionAnnotation: "PreferClose"}}},
			map[string]string{"n1": "a"}, false, `annotation mcs.kubectl.io/traffic-distribution="PreferClose" has no effect: the one value is PreferSameCluster`},
	} {
		var topo *snapshot.Topology
		if tc.zones != nil {
			topo = snapshot.NewTopology(tc.zones)
		}
		c := ChoiceOf(tc.exp, topo)
		if tc.name == "no choice" {
			if c != nil {
				t.Errorf("%s: %+v", tc.name, c)
			}
			continue
		}
		if c == nil || c.Effective != tc.effective || c.Message != tc.message {
			t.Errorf("%s: got %+v, want effective %v, message %q", tc.name, c, tc.effective, tc.message)
		}
	}
}

// TestHintsKeptUnread: where the member's nodes were not read (status without the right to list
// them), its copies keep the hints they hold: status does not call them stale for it.
func TestHintsKeptUnread(t *testing.T) {
	held := mkSlice("demo", "web", names.EndpointSliceName("web", "m1", "web-1"), "10.1.0.1")
	held.Labels = map[string]string{mcsv1beta1.LabelServiceName: "web", mcsv1beta1.LabelSourceCluster: "m1",
		discoveryv1.LabelServiceName: "derived-web", names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, names.ManagedByLabel: names.ManagedByValue}
	held.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "a"}}}
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", preferring(mkExport("demo", "web", 1)), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.1.0.1"), held),
	}}
	d := Compute(obs)
	got := d.Clusters["m1"].EndpointSlices[0].Endpoints[0].Hints
	if !reflect.DeepEqual(got, held.Endpoints[0].Hints) {
		t.Errorf("hints %+v, want the held copy's %+v", got, held.Endpoints[0].Hints)
	}
}
