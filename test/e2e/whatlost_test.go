//go:build e2e

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// passReport is what `sync -o json` prints, as far as these tests read it.
type passReport struct {
	Conflicts []engine.Conflict `json:"conflicts"`
	Skipped   []string          `json:"skipped"`
}

func syncJSON(t *testing.T, args ...string) (passReport, result) {
	t.Helper()
	r := mustMCS(t, append([]string{"sync", "-o", "json"}, args...)...)
	var rep passReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sync -o json: %v\n%s", err, r.stdout)
	}
	return rep, r
}

func ports(ps ...corev1.ServicePort) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Ports = ps }
}

// The report: member3 (oldest) exports http:80, admin:9090 and udp:5000/UDP, member1 the same
// with http on 81. Every place a conflict is told (the export's condition, sync's report, status,
// diagnose) names what member1 lost, the port nothing answers on, and the port whose traffic no
// longer reaches member1.
func TestConflictNamesWhatLost(t *testing.T) {
	ns := namespace(t, "e2e-lost", members...)
	admin := corev1.ServicePort{Name: "admin", Port: 9090, Protocol: corev1.ProtocolTCP}
	udp := corev1.ServicePort{Name: "udp", Port: 5000, Protocol: corev1.ProtocolUDP}
	service(t, "member3", ns, "web", ports(corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}, admin, udp))
	service(t, "member1", ns, "web", ports(corev1.ServicePort{Name: "http", Port: 81, Protocol: corev1.ProtocolTCP}, admin, udp))
	userExport(t, "member3", ns, "web")
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	userExport(t, "member1", ns, "web")

	rep, _ := syncJSON(t, "-n", ns, "--contexts", allMembers)
	want := `Conflicting ports. Using "http:80/TCP,admin:9090/TCP,udp:5000/UDP" from oldest service export in "member3". ` +
		`Not using "http:81/TCP" from "member1". Nothing answers on 81/TCP. Traffic to "http:80/TCP" does not reach "member1". 1/2 clusters disagree.`
	if len(rep.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", rep.Conflicts)
	}
	c := rep.Conflicts[0]
	if c.Message != want || !slices.Equal(c.Unanswered, []string{"81/TCP"}) ||
		!slices.Equal(c.Losing, []engine.LosingExport{{Cluster: "member1", Value: "http:81/TCP", Unserved: "http:80/TCP"}}) {
		t.Errorf("sync's conflict %+v\nwant message %q", c, want)
	}

	for _, id := range []string{"member1", "member3"} {
		se := get(t, id, seGVR("v1beta1"), ns, "web")
		conds, _, _ := unstructured.NestedSlice(se.Object, "status", "conditions")
		var msg string
		for _, x := range conds {
			if m := x.(map[string]any); m["type"] == "Conflict" {
				msg, _ = m["message"].(string)
			}
		}
		if msg != want {
			t.Errorf("%s: the export's Conflict condition says %q", id, msg)
		}
	}

	l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
	it := item(t, l, "web")
	if len(it.Conflicts) != 1 || it.Conflicts[0].Message != want ||
		!slices.Equal(it.Conflicts[0].Losing, []status.LosingExport{{Cluster: "member1", Value: "http:81/TCP", Unserved: "http:80/TCP"}}) {
		t.Errorf("status's conflicts %+v", it.Conflicts)
	}
	d := mustMCS(t, "status", "web", "-n", ns, "--contexts", allMembers, "--no-color")
	if !strings.Contains(strings.Join(strings.Fields(d.stdout), " "), "Nothing answers on 81/TCP.") {
		t.Errorf("the description does not say which port will not answer:\n%s", d.stdout)
	}

	drep, _ := diagnoseJSON(t, "", ns, "-n", ns, "--contexts", allMembers)
	found := false
	for _, x := range drep.Results {
		found = found || (x.Check == diagnose.CheckConflict && strings.Contains(x.Message, `Not using "http:81/TCP" from "member1". Nothing answers on 81/TCP.`))
	}
	if !found {
		t.Errorf("diagnose does not name what lost:\n%s", failures(drep))
	}
}

// A service exported from member1, whose namespace member2 and member3 do not have: status says
// Degraded and why, sync's report (one pass, and --watch) and diagnose name the clusters.
func TestNotImportableIsDegraded(t *testing.T) {
	ns := namespace(t, "e2e-nons", "member1")
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member1")
	why := `not imported in "member2", "member3": they have no namespace "` + ns + `" (a service is imported only where its namespace exists)`

	rep, r := syncJSON(t, "-n", ns, "--contexts", allMembers)
	if !slices.Contains(rep.Skipped, "service "+ns+"/serve: "+why) {
		t.Errorf("sync -o json's skipped %q lack %q", rep.Skipped, why)
	}
	r = mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if !strings.Contains(r.stderr, "Warning: service "+ns+"/serve: "+why+"\n") {
		t.Errorf("sync's warnings lack the clusters that cannot import:\n%s", r.stderr)
	}

	l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
	it := item(t, l, "serve")
	if it.Health != status.Degraded || !slices.Contains(it.Problems, "N"+why[1:]+".") {
		t.Errorf("health %s, problems %q", it.Health, it.Problems)
	}
	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "--no-color")
	if f := row(t, r.stdout, ns, "serve"); !slices.Contains(f, "Degraded") {
		t.Errorf("table row %v in\n%s", f, r.stdout)
	}
	r = mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers, "--no-color")
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "N"+why[1:]) {
		t.Errorf("the description does not say why:\n%s", r.stdout)
	}

	drep, _ := diagnoseJSON(t, "", ns, "-n", ns, "--contexts", allMembers)
	for _, id := range []string{"member2", "member3"} {
		found := false
		for _, x := range drep.Results {
			found = found || (x.Check == diagnose.CheckImport && x.Cluster == id && x.Severity == diagnose.Warn && strings.Contains(x.Message, "not imported in \""+id+"\""))
		}
		if !found {
			t.Errorf("diagnose does not warn that %s cannot import it: %+v", id, drep.Results)
		}
	}

	w := startWatch(t, ns)
	waitFor(t, "sync --watch to warn", func() bool { return strings.Contains(w.out.String(), "Warning: service "+ns+"/serve: "+why) })
}

// status and diagnose over --contexts=member2 only: member1 exports the seed service, but is not
// read. What cannot be known is said; nothing is called left over.
func TestSubsetReadSaysWhatItCannotKnow(t *testing.T) {
	ns := seedService(t, "e2e-subset")
	l, _ := statusJSON(t, "-n", ns, "--contexts", "member2")
	it := item(t, l, "serve")
	if it.Health != status.Unknown || !slices.Equal(it.UnreadExporters, []string{"member1"}) || len(it.Problems) != 1 ||
		strings.Contains(it.Problems[0], "left over") || !strings.Contains(it.Problems[0], `"member1" as a source, outside this read (--contexts)`) {
		t.Errorf("health %s, unread exporters %v, problems %q", it.Health, it.UnreadExporters, it.Problems)
	}
	r := mustMCS(t, "status", "-n", ns, "--contexts", "member2", "--no-color")
	if f := row(t, r.stdout, ns, "serve"); !slices.Contains(f, "Unknown") {
		t.Errorf("table row %v in\n%s", f, r.stdout)
	}
	if want := "Warning: service " + ns + `/serve is Unknown: its imports name "member1" as a source, outside --contexts, whose exports this read cannot know` + "\n"; r.stderr != want {
		t.Errorf("the table's stderr:\n%s\nwant:\n%s", r.stderr, want)
	}

	drep, dr := diagnoseJSON(t, "", ns, "-n", ns, "--contexts", "member2")
	for _, x := range drep.Results {
		if strings.Contains(x.Message, "left over:") || x.Check == diagnose.CheckForeignSlice {
			t.Errorf("diagnose over member2 alone: %s %s %s: %s", x.Check, x.Cluster, x.Severity, x.Message)
		}
	}
	if drep.Summary.Failed != 0 {
		t.Errorf("diagnose over member2 alone fails (exit %d):\n%s", dr.code, failures(drep))
	}
	// member2 and member3: member1's copies are recorded by the imports, not foreign.
	drep, _ = diagnoseJSON(t, "", ns, "-n", ns, "--contexts", "member2,member3")
	for _, x := range drep.Results {
		if strings.Contains(x.Message, "left over:") || x.Check == diagnose.CheckForeignSlice {
			t.Errorf("diagnose over member2, member3: %s %s %s: %s", x.Check, x.Cluster, x.Severity, x.Message)
		}
	}
}
