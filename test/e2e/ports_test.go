//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
)

// TestSyncUnnamedPortInAUnion is the report: cart exported from member3 with one unnamed port,
// then from member1 with one named by `kubectl create service clusterip`. The derived Service
// of two ports names both (the apiserver refused it unnamed, and sync retried for ever), the
// copies name their ports alike, and diagnose's derived-service check passes.
func TestSyncUnnamedPortInAUnion(t *testing.T) {
	ns := namespace(t, "e2e-ports", members...)
	deployment(t, "member3", ns, "cart", 1)
	service(t, "member3", ns, "cart") // 80 -> 8080, unnamed
	userExport(t, "member3", ns, "cart")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if got := derivedPorts(t, "member2", ns); !slices.Equal(got, []string{":80/TCP"}) {
		t.Fatalf("one exporter: derived-cart ports %v, want the one unnamed port", got)
	}

	time.Sleep(1100 * time.Millisecond) // member3's export stays the oldest (1 s timestamps)
	deployment(t, "member1", ns, "cart", 1)
	if out, err := runKubectl("member1", "-n", ns, "create", "service", "clusterip", "cart", "--tcp=8080:8080"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	userExport(t, "member1", ns, "cart")
	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	// The conflict's message is wrapped under its row: read as one line.
	if strings.HasPrefix(r.stdout, "No changes.") || !strings.Contains(r.stdout, "PortConflict") ||
		!strings.Contains(strings.Join(strings.Fields(r.stdout), " "), `Using "80/TCP as tcp-80" from oldest service export in "member3" and "8080-8080:8080/TCP" from service export in "member1"`) {
		t.Errorf("sync output:\n%s", r.stdout)
	}
	for _, c := range members {
		if got := derivedPorts(t, c, ns); !slices.Equal(got, []string{"8080-8080:8080/TCP", "tcp-80:80/TCP"}) {
			t.Errorf("%s: derived-cart ports %v", c, got)
		}
		bySource := slicePortsBySource(t, c, ns, "cart")
		if !slices.Equal(bySource["member3"], []string{"tcp-80"}) || !slices.Equal(bySource["member1"], []string{"8080-8080"}) {
			t.Errorf("%s: the copies' port names by source %v, want member3's tcp-80 and member1's 8080-8080", c, bySource)
		}
	}
	for _, c := range []string{"member1", "member3"} {
		if got := conditions(t, c, ns, "cart"); got["Ready"] != "True/Exported" || got["Conflict"] != "True/PortConflict" {
			t.Errorf("%s: export conditions %v", c, got)
		}
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("second sync wrote:\n%s", r.stdout)
	}
	rep, _ := diagnoseJSON(t, "", ns, "cart", "-n", ns, "--contexts", allMembers)
	for _, x := range rep.Results {
		if x.Severity == diagnose.Fail && x.Check != diagnose.CheckConflict {
			t.Errorf("diagnose: %s %s %s: %s", x.Check, x.Cluster, x.Object, x.Message)
		}
	}
}

// derivedPorts are derived-cart's ports as name:port/protocol, sorted.
func derivedPorts(t *testing.T, c, ns string) []string {
	t.Helper()
	s := derivedService(t, c, ns, "cart")
	if s == nil {
		t.Fatalf("%s: no derived-cart", c)
	}
	var out []string
	for _, p := range s.Spec.Ports {
		out = append(out, fmt.Sprintf("%s:%d/%s", p.Name, p.Port, p.Protocol))
	}
	sort.Strings(out)
	return out
}
