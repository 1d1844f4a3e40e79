package diagnose

import (
	"strings"
	"testing"
)

// A binding Karmada did not schedule points at what the members serve, not at the object's events.
func TestKarmadaFixUnscheduled(t *testing.T) {
	fix, cmds := karmadaFix("karmada", "serviceexport", "demo", "web", []string{
		"Karmada has not scheduled it: ResourceBinding web-serviceexport is Scheduled=False (NoClusterFit): 0/3 clusters are available: 1 cluster(s) did not have the API resource."})
	if !strings.Contains(fix, "does not serve the object's API") || len(cmds) != 1 || !strings.Contains(cmds[0].String(), "get clusters.cluster.karmada.io") {
		t.Errorf("fix %q, commands %v", fix, cmds)
	}
}
