package diagnose

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// zonedServe gives serve trafficDistribution td in its exporting members and its endpoints zone
// "a", but for the last endpoint of member2's, zone last ("": none); hinted hints the copies
// with their endpoints' zones, as sync does.
func zonedServe(s *Snapshot, td, last string, hinted bool) {
	for i := range s.Clusters {
		m := &s.Clusters[i]
		for _, sv := range m.Services {
			if sv.Name == "serve" {
				sv.Spec.TrafficDistribution = &td
			}
		}
		for _, sl := range m.EndpointSlices {
			for j := range sl.Endpoints {
				e := &sl.Endpoints[j]
				z := "a"
				if e.Addresses[0] == "10.12.0.2" {
					z = last
				}
				if z != "" {
					e.Zone = &z
					if hinted && sl.Name != "serve-abc" {
						e.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: z}}}
					}
				}
			}
		}
	}
}

// TestTrafficDistribution: the service's trafficDistribution carried by the copies is ok; an
// endpoint without a zone is the one warning, naming the cluster.
func TestTrafficDistribution(t *testing.T) {
	s := healthy()
	zonedServe(s, "PreferClose", "a", true)
	r := Run(s)
	if r.Summary.Failed != 0 || r.Summary.Warnings != 0 {
		t.Fatalf("zoned and hinted:\n%s", failed(r))
	}
	expectHas(t, r, CheckTraffic, "", OK, "trafficDistribution PreferClose: the copies hint each endpoint with its own zone", "")

	s = healthy()
	zonedServe(s, "PreferClose", "", false)
	r = Run(s)
	expectOne(t, r, CheckTraffic, "", Warn,
		`trafficDistribution PreferClose is not carried across clusters: endpoints of "member2" (1 of 2) have no zone`,
		"topology.kubernetes.io/zone labels")
	if got := only(r, CheckTraffic, ""); len(got) != 1 || got[0].Object != "service/demo/serve" {
		t.Errorf("results %+v, want one about service/demo/serve", got)
	}
}
