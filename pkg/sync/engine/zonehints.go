package engine

// A service's own trafficDistribution across clusters: every endpoint hinted for its own zone.
//
// With trafficDistribution PreferClose, PreferSameZone or PreferSameNode, the EndpointSlice
// controller hints each endpoint of a Service's slices with the endpoint's own zone (k8s.io/
// endpointslice, trafficdist; PreferSameNode adds the endpoint's node) and kube-proxy sends a
// node's traffic to the endpoints hinted for its zone while one is ready. The controller leaves
// the copies alone (another managed-by), so sync hints them the same way: a node then uses the
// ready endpoints of its zone, whichever cluster they are in, and every endpoint when its zone has
// none. Node hints are not carried: a copy names no node (copySlice), and a node of another
// cluster means nothing here; PreferSameNode is carried as its zone hints, which is what a
// kube-proxy without node hints reads of it in the exporting cluster too.
//
// kube-proxy (pkg/proxy/topology.go, topologyModeFromHints) ignores every hint of a Service once
// one ready endpoint has none. So the copies are hinted only when every endpoint of the service has
// a zone: every endpoint of every constituent's source slices that is copied, ready or not (an
// endpoint not ready now is one kube-proxy counts once it is, and a readiness change must not turn
// the hints of every copy in every member on and off). Otherwise no copy is hinted, and the
// service's ZoneHints says which clusters' endpoints lack a zone.

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ZoneHints is how the copies of a service carry its trafficDistribution.
type ZoneHints struct {
	// Value is the service's trafficDistribution, as the oldest export gives it.
	Value string `json:"value"`
	// Effective: the copies carry each endpoint's zone as its hint. Message says why not, or
	// what the value becomes across clusters.
	Effective bool   `json:"effective"`
	Message   string `json:"message,omitempty"`
}

// zoneDistributions are the trafficDistribution values the EndpointSlice controller hints zones
// for.
var zoneDistributions = []string{corev1.ServiceTrafficDistributionPreferClose,
	corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}

// zoneHintsOf is how the copies of service k, whose trafficDistribution is td, carry it, from the
// source slices of its constituents cons (the union's ports decide which are copied); nil when td
// asks for no hints.
func zoneHintsOf(idx []*clusterIndex, k key, td *string, cons []constituent, union []unionPort) *ZoneHints {
	if td == nil || !slices.Contains(zoneDistributions, *td) {
		return nil
	}
	type count struct {
		cluster            string
		unzoned, endpoints int
	}
	var lacking []count
	for _, c := range cons {
		served := servedPorts(c, union)
		n := count{cluster: c.cluster}
		for _, s := range findCluster(idx, c.cluster).ix.Sources[k] {
			if _, copied := copyPorts(s, served); !copied {
				continue
			}
			for _, e := range s.Endpoints {
				n.endpoints++
				if zoneOf(e) == "" {
					n.unzoned++
				}
			}
		}
		if n.unzoned > 0 {
			lacking = append(lacking, n)
		}
	}
	z := &ZoneHints{Value: *td, Effective: len(lacking) == 0}
	if z.Effective {
		if *td == corev1.ServiceTrafficDistributionPreferSameNode {
			z.Message = "PreferSameNode is carried across clusters as zone hints: a copy names no node"
		}
		return z
	}
	slices.SortFunc(lacking, func(a, b count) int { return strings.Compare(a.cluster, b.cluster) })
	parts := make([]string, len(lacking))
	for i, n := range lacking {
		parts[i] = fmt.Sprintf("%q (%d of %d)", n.cluster, n.unzoned, n.endpoints)
	}
	z.Message = fmt.Sprintf("trafficDistribution %s is not carried across clusters: endpoints of %s have no zone", *td, strings.Join(parts, ", "))
	return z
}

// zoneOf is the zone an endpoint can be hinted for: its own, when it has one that a hint may name.
func zoneOf(e discoveryv1.Endpoint) string {
	if e.Zone == nil || len(validation.IsValidLabelValue(*e.Zone)) > 0 {
		return ""
	}
	return *e.Zone
}

// hintOwnZones hints every endpoint of a copy with its own zone.
func hintOwnZones(s *discoveryv1.EndpointSlice) {
	for i := range s.Endpoints {
		s.Endpoints[i].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zoneOf(s.Endpoints[i])}}}
	}
}
