package snapshot

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Topology is what MCS reads of a member's nodes: their zones (topology.kubernetes.io/zone), the
// one thing a PreferSameCluster choice needs to hint a member's endpoints for its own nodes.
type Topology struct {
	// Zones are the distinct zones of the nodes, sorted.
	Zones []string
	// Nodes counts the nodes read; Unzoned those without a zone label.
	Nodes, Unzoned int
}

// NewTopology sums up nodes' zone labels (name to zone, "" for none).
func NewTopology(zones map[string]string) *Topology {
	t := &Topology{Nodes: len(zones)}
	for _, z := range zones {
		if z == "" {
			t.Unzoned++
		} else if !slices.Contains(t.Zones, z) {
			t.Zones = append(t.Zones, z)
		}
	}
	slices.Sort(t.Zones)
	return t
}

// ZoneOf is a node's zone label, "" for none.
func ZoneOf(n *corev1.Node) string { return n.Labels[corev1.LabelTopologyZone] }
