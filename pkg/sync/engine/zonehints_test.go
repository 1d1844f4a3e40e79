package engine

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// oldestTD is the trafficDistribution of the Service whose export of k is the oldest, found
// without the engine's merge: what the service's copies are hinted for.
func oldestTD(obs Observed, k key) *string {
	var best *corev1.Service
	var bestAt metav1.Time
	bestID := ""
	for _, c := range obs.Clusters {
		i := slices.IndexFunc(c.ServiceExports, func(e *mcsv1beta1.ServiceExport) bool {
			return e.Namespace == k.Namespace && e.Name == k.Name && e.DeletionTimestamp == nil
		})
		j := slices.IndexFunc(c.Services, func(s *corev1.Service) bool {
			return s.Namespace == k.Namespace && s.Name == k.Name && !names.IsManaged(s.Labels) && s.Spec.Type != corev1.ServiceTypeExternalName
		})
		if i < 0 || j < 0 {
			continue
		}
		at := c.ServiceExports[i].CreationTimestamp
		if best == nil || at.Before(&bestAt) || at.Equal(&bestAt) && c.ID < bestID {
			best, bestAt, bestID = c.Services[j], at, c.ID
		}
	}
	if best == nil {
		return nil
	}
	return best.Spec.TrafficDistribution
}

// checkCopyHints: the copies of one service in cluster id carry the hints of the member's choice
// where it is effective; elsewhere each endpoint's own zone when td asks for zones and every
// endpoint of them has one a hint may name, else none. A choice whose effect is unknown is not checked.
func checkCopyHints(t *testing.T, id string, choice *Choice, td *string, copies []*discoveryv1.EndpointSlice) {
	t.Helper()
	if choice != nil && !choice.known {
		return
	}
	zoned := td != nil && (*td == "PreferClose" || *td == "PreferSameZone" || *td == "PreferSameNode")
	for _, s := range copies {
		for _, e := range s.Endpoints {
			// A hint names a zone as a label value (EndpointSlice validation).
			zoned = zoned && e.Zone != nil && *e.Zone != "" && len(validation.IsValidLabelValue(*e.Zone)) == 0
		}
	}
	for _, s := range copies {
		for _, e := range s.Endpoints {
			var want []string
			switch {
			case choice != nil && choice.Effective && s.Labels[mcsv1beta1.LabelSourceCluster] == id:
				want = choice.Zones
			case choice != nil && choice.Effective:
				want = []string{OtherClusterZone}
			case zoned:
				want = []string{*e.Zone}
			}
			if got := hintZones(e); !slices.Equal(got, want) || e.Hints != nil && len(e.Hints.ForNodes) > 0 {
				t.Errorf("%q: copy %s/%s: endpoint %v hinted for %q (nodes %v), want %q", id, s.Namespace, s.Name, e.Addresses, got, e.Hints, want)
			}
		}
	}
}

// checkDesiredHints runs checkCopyHints on every service's copies desired in every cluster of d.
func checkDesiredHints(t *testing.T, obs Observed, d Desired) {
	t.Helper()
	for _, c := range obs.Clusters {
		cd := d.Clusters[c.ID]
		if cd == nil {
			continue
		}
		bySvc := map[key][]*discoveryv1.EndpointSlice{}
		for _, s := range cd.EndpointSlices {
			k := key{Namespace: s.Namespace, Name: s.Labels[mcsv1beta1.LabelServiceName]}
			bySvc[k] = append(bySvc[k], s)
		}
		for k, copies := range bySvc {
			checkCopyHints(t, c.ID, ChoiceOf(snapshot.NewIndex(&c.Objects).Exports[k], c.Topology), oldestTD(obs, k), copies)
		}
	}
}

func withTD(s *corev1.Service, td string) *corev1.Service {
	s.Spec.TrafficDistribution = &td
	return s
}

func zonedSlice(name string, zones map[string]string) *discoveryv1.EndpointSlice {
	addrs := slices.Sorted(maps.Keys(zones))
	s := mkSlice("demo", "web", name, addrs...)
	for i := range s.Endpoints {
		if z := zones[addrs[i]]; z != "" {
			s.Endpoints[i].Zone = &z
		} else {
			s.Endpoints[i].Zone = nil
		}
	}
	return s
}

// zoneObs: m1 and m2 export web with td (m1's export the older), their endpoints in zones, m3
// imports it; every member has nodes in zones a and b.
func zoneObs(td string, m1, m2 map[string]string) Observed {
	zones := map[string]string{"n1": "a", "n2": "b"}
	return Observed{Now: now, FieldManager: names.FieldManager, Clusters: []ObservedCluster{
		withTopology(member("m1", mkExport("demo", "web", 1), withTD(mkService("demo", "web"), td), zonedSlice("web-1", m1)), zones),
		withTopology(member("m2", mkExport("demo", "web", 2), withTD(mkService("demo", "web"), td), zonedSlice("web-1", m2)), zones),
		withTopology(member("m3"), zones),
	}}
}

// TestZoneHints: with a zone trafficDistribution, every copy in every member hints each endpoint
// with its own zone, and a converged clusterset writes nothing more; without it, none.
func TestZoneHints(t *testing.T) {
	for _, td := range []string{"PreferClose", "PreferSameZone", "PreferSameNode"} {
		obs := zoneObs(td, map[string]string{"10.1.0.1": "a", "10.1.0.2": "b"}, map[string]string{"10.2.0.1": "b"})
		d := Compute(obs)
		for id, cd := range d.Clusters {
			if len(cd.EndpointSlices) != 2 {
				t.Fatalf("%s: %s: %d copies, want 2", td, id, len(cd.EndpointSlices))
			}
			for _, s := range cd.EndpointSlices {
				for _, e := range s.Endpoints {
					if got := hintZones(e); !slices.Equal(got, []string{*e.Zone}) {
						t.Errorf("%s: %s: endpoint %v hinted %q, want its zone %q", td, id, e.Addresses, got, *e.Zone)
					}
				}
			}
		}
		checkDesiredHints(t, obs, d)
		want := &ZoneHints{Value: td, Effective: true}
		if td == "PreferSameNode" {
			want.Message = "PreferSameNode is carried across clusters as zone hints: a copy names no node"
		}
		if got := Summarize(obs)[0].ZoneHints; *got != *want {
			t.Errorf("%s: summary %+v, want %+v", td, got, want)
		}

		conv := cloneObs(obs)
		if n, left := converge(&conv, 6); len(left) != 0 {
			t.Fatalf("%s: not converged after %d passes: %q", td, n, summary(left))
		}
		if left := Plan(digestCopies(conv), Compute(conv)); len(left) != 0 {
			t.Fatalf("%s: not converged with the copies as digests: %q", td, summary(left))
		}

		// trafficDistribution removed: every copy is rewritten without hints.
		gone := cloneObs(conv)
		for _, c := range gone.Clusters {
			for _, s := range c.Services {
				if !names.IsManaged(s.Labels) {
					s.Spec.TrafficDistribution = nil
				}
			}
		}
		if got := Summarize(gone)[0].ZoneHints; got != nil {
			t.Errorf("%s removed: summary %+v, want none", td, got)
		}
		rewritten := 0
		for _, a := range Plan(digestCopies(gone), Compute(gone)) {
			if a.Kind != snapshot.KindEndpointSlice {
				continue
			}
			rewritten++
			for _, e := range a.Object.(*discoveryv1.EndpointSlice).Endpoints {
				if a.Verb != VerbUpdate || e.Hints != nil {
					t.Errorf("%s removed: %s %s in %s, hints %+v", td, a.Verb, a.Name, a.Cluster, e.Hints)
				}
			}
		}
		if rewritten != 6 {
			t.Errorf("%s removed: %d copies rewritten, want the 6", td, rewritten)
		}
	}
}

// TestZoneHintsUnzoned: one endpoint without a zone, ready or not, in any constituent: no copy is
// hinted, and the summary names the clusters whose endpoints lack one.
func TestZoneHintsUnzoned(t *testing.T) {
	for _, ready := range []bool{true, false} {
		obs := zoneObs("PreferClose", map[string]string{"10.1.0.1": "a"}, map[string]string{"10.2.0.1": "b", "10.2.0.2": "", "10.2.0.3": "b"})
		obs.Clusters[1].EndpointSlices[0].Endpoints[1].Conditions.Ready = &ready
		d := Compute(obs)
		for id, cd := range d.Clusters {
			for _, s := range cd.EndpointSlices {
				for _, e := range s.Endpoints {
					if e.Hints != nil {
						t.Errorf("ready %v: %s: endpoint %v hinted %+v", ready, id, e.Addresses, e.Hints)
					}
				}
			}
		}
		checkDesiredHints(t, obs, d)
		want := ZoneHints{Value: "PreferClose", Message: `trafficDistribution PreferClose is not carried across clusters: endpoints of "m2" (1 of 3) have no zone`}
		if got := Summarize(obs)[0].ZoneHints; got == nil || *got != want {
			t.Errorf("ready %v: summary %+v, want %+v", ready, got, want)
		}
	}

	// A zone that no hint may name counts as none; an unzoned endpoint of a slice that is not
	// copied (none of its ports is the service's) does not count.
	obs := zoneObs("PreferClose", map[string]string{"10.1.0.1": "a"}, map[string]string{"10.2.0.1": "not a zone!"})
	notCopied := zonedSlice("web-2", map[string]string{"10.1.0.9": ""})
	notCopied.Ports = []discoveryv1.EndpointPort{{Name: ptr("metrics"), Port: ptr(int32(9090))}}
	obs.Clusters[0].EndpointSlices = append(obs.Clusters[0].EndpointSlices, notCopied)
	want := ZoneHints{Value: "PreferClose", Message: `trafficDistribution PreferClose is not carried across clusters: endpoints of "m2" (1 of 1) have no zone`}
	if got := Summarize(obs)[0].ZoneHints; got == nil || *got != want {
		t.Errorf("invalid zone: summary %+v, want %+v", got, want)
	}
	checkDesiredHints(t, obs, Compute(obs))
}

// TestZoneHintsWithChoice: a member whose PreferSameCluster takes effect hints its copies for
// that; the others, and one whose choice has no effect, carry the zone hints.
func TestZoneHintsWithChoice(t *testing.T) {
	obs := zoneObs("PreferClose", map[string]string{"10.1.0.1": "a"}, map[string]string{"10.2.0.1": "b"})
	obs.Clusters[1].ServiceExports[0] = preferring(obs.Clusters[1].ServiceExports[0])
	obs.Clusters[0].ServiceExports[0] = preferring(obs.Clusters[0].ServiceExports[0])
	obs.Clusters[0].Topology = snapshot.NewTopology(map[string]string{"n1": ""}) // m1's choice has no effect
	d := Compute(obs)
	checkDesiredHints(t, obs, d)
	for _, s := range d.Clusters["m2"].EndpointSlices {
		want := []string{OtherClusterZone}
		if s.Labels[mcsv1beta1.LabelSourceCluster] == "m2" {
			want = []string{"a", "b"}
		}
		if got := hintZones(s.Endpoints[0]); !slices.Equal(got, want) {
			t.Errorf("m2: copy of %s hinted %q, want %q", s.Labels[mcsv1beta1.LabelSourceCluster], got, want)
		}
	}
	for _, id := range []string{"m1", "m3"} {
		for _, s := range d.Clusters[id].EndpointSlices {
			if got := hintZones(s.Endpoints[0]); !slices.Equal(got, []string{*s.Endpoints[0].Zone}) {
				t.Errorf("%s: copy of %s hinted %q, want its zone", id, s.Labels[mcsv1beta1.LabelSourceCluster], got)
			}
		}
	}
	conv := cloneObs(obs)
	if n, left := converge(&conv, 6); len(left) != 0 {
		t.Fatalf("not converged after %d passes: %q", n, summary(left))
	}
}
