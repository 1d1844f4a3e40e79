package engine

// PreferSameCluster: zone hints on the copies of a member that asked to keep its traffic at home.
//
// kube-proxy (pkg/proxy/topology.go of Kubernetes v1.36, topologyModeFromHints) looks at a
// Service's ready endpoints only: when every one carries zone hints and at least one names the
// node's zone, the node uses only the endpoints hinted for its zone; when none names it (or the
// node has no zone label, or one ready endpoint has no hint) it ignores the hints and uses every
// endpoint. So a member's own endpoints hinted with every zone of its nodes, and every other
// cluster's with a zone none of its nodes has, make its nodes use its own ready endpoints while
// one exists and every cluster's once none does: failover is the endpoint change itself.

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// OtherClusterZone is the zone hint of the other clusters' endpoints in a member that prefers
// its own: a valid zone name that no node of the member has (ChoiceOf refuses one that does).
// The DNS server reads it too (pkg/dnszone), hence its home in pkg/names.
const OtherClusterZone = names.OtherClusterZone

// MaxZoneHints is the most zones an endpoint's hints may name (EndpointSlice validation).
const MaxZoneHints = 8

// Choice is a member's traffic distribution choice for one service and whether it takes effect.
type Choice struct {
	Value string `json:"value"`
	// Effective: the member's copies carry the hints. Message says why not, or where the
	// choice does not reach (nodes without a zone label).
	Effective bool   `json:"effective"`
	Message   string `json:"message,omitempty"`
	// Zones are the zones the member's own endpoints are hinted for.
	Zones []string `json:"zones,omitempty"`
	// known is false when the member's nodes were not read: its copies' hints are what they are.
	known bool
}

// ChoiceOf is what exp asks of the member it is in, whose nodes are t (nil: not read); nil when
// it asks nothing.
func ChoiceOf(exp *mcsv1beta1.ServiceExport, t *snapshot.Topology) *Choice {
	if exp == nil || exp.DeletionTimestamp != nil {
		return nil
	}
	v, ok := exp.Annotations[names.TrafficDistributionAnnotation]
	if !ok {
		return nil
	}
	c := &Choice{Value: v, known: t != nil}
	switch {
	case v != names.PreferSameCluster:
		c.Message = fmt.Sprintf("annotation %s=%q has no effect: the one value is %s", names.TrafficDistributionAnnotation, v, names.PreferSameCluster)
	case t == nil:
		c.Message = fmt.Sprintf("whether %s takes effect is unknown: its nodes' zones were not read (that needs list on nodes)", v)
	case len(t.Zones) == 0:
		c.Message = fmt.Sprintf("%s has no effect: none of its nodes has a %s label", v, corev1.LabelTopologyZone)
	case len(t.Zones) > MaxZoneHints:
		c.Message = fmt.Sprintf("%s has no effect: its nodes are in %d zones, more than the %d an endpoint's hints may name", v, len(t.Zones), MaxZoneHints)
	case slices.Contains(t.Zones, OtherClusterZone):
		c.Message = fmt.Sprintf("%s has no effect: a node's zone is %s, the hint of the other clusters' endpoints", v, OtherClusterZone)
	default:
		c.Effective, c.Zones = true, slices.Clone(t.Zones)
		if t.Unzoned > 0 {
			c.Message = fmt.Sprintf("%d of its %d nodes have no %s label: pods there use every cluster's endpoints", t.Unzoned, t.Nodes, corev1.LabelTopologyZone)
		}
	}
	return c
}

// applyHints hints the copies desired in every cluster whose export of their service asks for
// PreferSameCluster and can have it, in place of the service's zone hints (zonehints.go); the
// others' copies keep those, or none. Where the member's nodes were not read, a copy keeps the
// hints it holds (status reads without them).
func applyHints(idx []*clusterIndex, d *Desired) {
	for _, ci := range idx {
		cd := d.Clusters[ci.ID]
		if cd == nil {
			continue
		}
		choices := map[key]*Choice{}
		for _, s := range cd.EndpointSlices {
			k := key{Namespace: s.Namespace, Name: s.Labels[mcsv1beta1.LabelServiceName]}
			c, seen := choices[k]
			if !seen {
				c = ChoiceOf(ci.exports[k], ci.Topology)
				choices[k] = c
			}
			switch {
			case c == nil:
			case c.Effective:
				zones := []string{OtherClusterZone}
				if s.Labels[mcsv1beta1.LabelSourceCluster] == ci.ID {
					zones = c.Zones
				}
				hint(s, zones)
			case !c.known:
				keepHints(s, ci.ix.Slices[key{Namespace: s.Namespace, Name: s.Name}])
			}
		}
	}
}

// hint gives every endpoint of s the zone hints zones.
func hint(s *discoveryv1.EndpointSlice, zones []string) {
	for i := range s.Endpoints {
		h := &discoveryv1.EndpointHints{ForZones: make([]discoveryv1.ForZone, len(zones))}
		for j, z := range zones {
			h.ForZones[j] = discoveryv1.ForZone{Name: z}
		}
		s.Endpoints[i].Hints = h
	}
}

// keepHints gives the endpoints of s the hints held's endpoints of the same addresses carry, none
// included.
func keepHints(s, held *discoveryv1.EndpointSlice) {
	if held == nil || snapshot.Digested(held) {
		return
	}
	by := map[string]*discoveryv1.EndpointHints{}
	for _, e := range held.Endpoints {
		by[strings.Join(e.Addresses, ",")] = e.Hints
	}
	for i := range s.Endpoints {
		if h, ok := by[strings.Join(s.Endpoints[i].Addresses, ",")]; ok {
			s.Endpoints[i].Hints = h.DeepCopy()
		}
	}
}
