package status

import (
	"bytes"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// zoned is seed() with serve's trafficDistribution td ("": none) and its endpoints in zones (""
// for none); hinted gives the copies each endpoint's zone as its hint, as sync does.
func zoned(td string, hinted bool, zones ...string) []snapshot.Cluster {
	cs := seed()
	for i := range cs {
		for _, s := range cs[i].Services {
			if s.Name == "serve" && td != "" {
				s.Spec.TrafficDistribution = &td
			}
		}
		for _, s := range cs[i].EndpointSlices {
			for j := range s.Endpoints {
				if z := zones[j]; z != "" {
					s.Endpoints[j].Zone = &z
					if hinted && s.Name != "serve-abc" {
						s.Endpoints[j].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: z}}}
					}
				}
			}
		}
	}
	return cs
}

// TestServiceTrafficDistribution: the row says how the copies carry the service's
// trafficDistribution; one note, naming the service and the cluster, when they do not; the health
// is left alone, and copies without the hints sync gives them are stale.
func TestServiceTrafficDistribution(t *testing.T) {
	it := only(t, Build(zoned("PreferClose", true, "a", "b")))
	if z := it.TrafficDistribution; z == nil || z.Value != "PreferClose" || !z.Effective || z.Message != "" || len(it.Notes) != 0 || it.Health != Healthy {
		t.Errorf("zoned, hinted: trafficDistribution %+v, notes %q, health %s, problems %q", z, it.Notes, it.Health, it.Problems)
	}

	it = only(t, Build(zoned("PreferClose", false, "a", "")))
	want := `service demo/serve: trafficDistribution PreferClose is not carried across clusters: endpoints of "member1" (1 of 2) have no zone.`
	if z := it.TrafficDistribution; z == nil || z.Effective || len(it.Notes) != 1 || it.Notes[0] != want || it.Health != Healthy {
		t.Errorf("unzoned: trafficDistribution %+v, notes %q (want %q), health %s, problems %q", z, it.Notes, want, it.Health, it.Problems)
	}
	var b bytes.Buffer
	if err := Describe(&b, Build(zoned("PreferClose", false, "a", "")), it, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Notes:\n  service demo/serve: trafficDistribution PreferClose") {
		t.Errorf("describe does not show the note:\n%s", b.String())
	}

	it = only(t, Build(zoned("PreferClose", false, "a", "b")))
	stale := sets.New[string]()
	for _, c := range it.Clusters {
		for _, cp := range c.Copies {
			if cp.State == CopiesStale {
				stale.Insert(c.Cluster)
			}
		}
	}
	if stale.Len() != 3 || it.Health != Degraded {
		t.Errorf("zoned, copies without hints: stale in %v, health %s; want every member's, Degraded", sets.List(stale), it.Health)
	}

	if it := only(t, Build(zoned("", false, "a", ""))); it.TrafficDistribution != nil || len(it.Notes) != 0 {
		t.Errorf("no trafficDistribution: %+v, notes %q", it.TrafficDistribution, it.Notes)
	}
}
