package status

import (
	"bytes"
	"fmt"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// TrafficChoice is a member's traffic distribution choice for a service (`expose
// --traffic-distribution`) and whether it takes effect there: sync's own reading of it
// (engine.ChoiceOf).
type TrafficChoice = engine.Choice

// ZoneHints is how the copies carry the service's trafficDistribution: sync's own decision.
type ZoneHints = engine.ZoneHints

// trafficChoices sets the service's trafficDistribution and each member's choice and, for each
// that does not take effect (or not on every node), one note naming the service or the member,
// and why. The service works without them: the notes leave the row's health alone.
func (b *item) trafficChoices() {
	if z := b.sum.ZoneHints; z != nil {
		b.out.TrafficDistribution = z
		if z.Message != "" {
			b.out.Notes = append(b.out.Notes, fmt.Sprintf("service %s/%s: %s.", b.k.Namespace, b.k.Name, z.Message))
		}
	}
	for i := range b.out.Clusters {
		cs := &b.out.Clusters[i]
		ix := b.byID[cs.Cluster]
		if ix == nil || !ix.HasData() {
			continue
		}
		c := engine.ChoiceOf(ix.Exports[b.k], ix.Topology)
		if c == nil {
			continue
		}
		cs.TrafficDistribution = c
		if c.Message != "" {
			b.out.Notes = append(b.out.Notes, fmt.Sprintf("cluster %q: %s.", cs.Cluster, c.Message))
		}
	}
}

// writeNotes writes the notes as writeProblems writes problems; nothing when there are none.
func writeNotes(b *bytes.Buffer, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("Notes:\n")
	for _, n := range notes {
		fmt.Fprintf(b, "  %s\n", printers.Wrap(n, 2, 4, printers.Width))
	}
}
