package dnszone

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// A member whose export asks for PreferSameCluster (docs/traffic.md) has its copies hinted by
// sync: its own endpoints for its nodes' zones, every other cluster's for names.OtherClusterZone
// alone; elsewhere copies carry no hints. So the hints alone tell, in the member that holds them,
// its own endpoints from the others' and whether it made the choice: the DNS server needs neither
// its cluster ID nor the ServiceExport, and a choice that cannot take effect (sync writes no
// hints) changes no answer.

// origin is what an endpoint's zone hints say of it in the member holding the copy.
type origin uint8

const (
	unhinted     origin = iota // no zone hint: no choice, or a copy sync holds but does not rewrite
	ownCluster                 // a zone of the member's nodes among its hints
	otherCluster               // hinted for OtherClusterZone alone
)

func originOf(h *discoveryv1.EndpointHints) origin {
	if h == nil || len(h.ForZones) == 0 {
		return unhinted
	}
	for _, z := range h.ForZones {
		if z.Name != names.OtherClusterZone {
			return ownCluster
		}
	}
	return otherCluster
}

// preferred are the endpoints a service's own names answer with, of its ready ones eps: the
// member's own while one is there, when every one carries hints; all of eps otherwise. It reads
// the hints as kube-proxy does for a ClusterSetIP (pkg/sync/engine/hints.go): one endpoint
// without hints, or none of the member's own, and the hints count for nothing.
func preferred(eps []endpoint) []endpoint {
	var own []endpoint
	for _, e := range eps {
		switch e.origin {
		case unhinted:
			return eps
		case ownCluster:
			own = append(own, e)
		}
	}
	if len(own) == 0 {
		return eps
	}
	return own
}
