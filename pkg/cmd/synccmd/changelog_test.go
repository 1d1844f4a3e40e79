package synccmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

func importChanges(cluster, name string) []reconciler.Change {
	var cs []reconciler.Change
	for _, a := range []string{"create", "status", "update"} {
		cs = append(cs, reconciler.Change{Cluster: cluster, Kind: "ServiceImport", Namespace: "demo", Name: name, Action: a, Service: name})
	}
	return append(cs, reconciler.Change{Cluster: cluster, Kind: "Service", Namespace: "demo", Name: "derived-" + name, Action: "create", Service: name})
}

// withSlices adds the copies of two source slices to importChanges.
func withSlices(cluster, name string) []reconciler.Change {
	return append(importChanges(cluster, name),
		reconciler.Change{Cluster: cluster, Kind: "EndpointSlice", Namespace: "demo", Name: "derived-" + name + "-member1-0123456789", Action: "create", Service: name},
		reconciler.Change{Cluster: cluster, Kind: "EndpointSlice", Namespace: "demo", Name: "derived-" + name + "-member3-9876543210", Action: "create", Service: name})
}

// sync --watch tells each object it writes in one line: time, cluster, kind, the service it
// belongs to, what became of it; a service's EndpointSlices that became the same in one.
func TestChangeLogLines(t *testing.T) {
	var out bytes.Buffer
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	l := &changeLog{out: &out, now: func() time.Time { return at }}
	l.changes(withSlices("member2", "serve"))
	want := []string{
		"07:00:00 member2 ServiceImport demo/serve created",
		"07:00:00 member2 Service demo/serve created",
		"07:00:00 member2 EndpointSlice(2) demo/serve created",
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}

	// Under load: linesPerSecond lines in a second, then one summary line for the rest.
	out.Reset()
	at = at.Add(time.Second)
	for i := 0; i < 30; i++ {
		l.changes(withSlices("member1", fmt.Sprintf("s%d", i)))
	}
	l.flush() // the same second: nothing yet
	at = at.Add(time.Second)
	l.flush()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != linesPerSecond+2 {
		t.Fatalf("%d lines, want %d and a summary:\n%s", len(lines), linesPerSecond, out.String())
	}
	// 120 objects in 90 lines: 20 lines (26 objects), then the other 94 in one, wrapped.
	if last := strings.Join(lines[len(lines)-2:], "\n"); last != "07:00:02  and 94 more objects: 94 created (EndpointSlice 48, ServiceImport 23,\n"+
		"          Service 23), 0 updated, 0 deleted" {
		t.Errorf("summary line %q", last)
	}
}

// With -o json: one line per write and one per change of the conflicts, each a JSON object.
func TestChangeLogJSON(t *testing.T) {
	var out bytes.Buffer
	l := &changeLog{out: &out, format: "json", now: func() time.Time { return time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC) }}
	l.changes(importChanges("member2", "serve"))
	l.conflicts([]engine.Conflict{{Namespace: "demo", Service: "web", Reason: "PortConflict", Winner: "member1"}})
	l.conflicts(nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	var w struct{ Time, Cluster, Kind, Object, Action string }
	if err := json.Unmarshal([]byte(lines[1]), &w); err != nil || w != (struct{ Time, Cluster, Kind, Object, Action string }{"2026-11-25T07:00:00Z", "member2", "ServiceImport", "demo/serve", "status"}) {
		t.Errorf("write line %s: %+v %v", lines[1], w, err)
	}
	var c struct {
		Conflicts []engine.Conflict `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(lines[4]), &c); err != nil || len(c.Conflicts) != 1 || strings.Contains(lines[4], `"cluster"`) {
		t.Errorf("conflicts line %s: %v", lines[4], err)
	}
	if lines[5] != `{"time":"2026-11-25T07:00:00Z","conflicts":[]}` {
		t.Errorf("no conflicts: %s", lines[5])
	}
	if strings.Contains(lines[3], "service") {
		t.Errorf("a key for the text's service: %s", lines[3])
	}
}

// A member that turns unreachable, and its return, are lines of the stream, in its format (they
// were once only a log line on stderr).
func TestChangeLogMembers(t *testing.T) {
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	var out, errOut bytes.Buffer
	l := &changeLog{out: &out, errOut: &errOut, now: func() time.Time { return at }}
	l.members(map[string]string{})
	l.members(map[string]string{"member3": "connection refused"})
	l.members(map[string]string{"member3": "connection refused"}) // told once
	l.members(map[string]string{})
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if want := "07:00:00 member3 Cluster - unreachable\n07:00:00 member3 Cluster - reachable"; strings.Join(got, "\n") != want {
		t.Errorf("text:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	l = &changeLog{out: &out, errOut: &errOut, format: "json", now: func() time.Time { return at }}
	l.members(map[string]string{"member3": "connection refused"})
	l.members(nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"time":"2026-11-25T07:00:00Z","member":{"cluster":"member3","state":"Unreachable","message":"connection refused"}}`,
		`{"time":"2026-11-25T07:00:00Z","member":{"cluster":"member3","state":"Reachable"}}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("json:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}

	out.Reset()
	l = &changeLog{out: &out, errOut: &errOut, format: "name", now: func() time.Time { return at }}
	l.members(map[string]string{"member3": "connection refused"})
	l.members(nil)
	if out.Len() != 0 || errOut.String() != "Warning: cluster \"member3\" is unreachable: connection refused\nCluster \"member3\" is reachable again\n" {
		t.Errorf("-o name: stdout %q, stderr %q", out.String(), errOut.String())
	}
}
