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
		cs = append(cs, reconciler.Change{Cluster: cluster, Kind: "ServiceImport", Namespace: "demo", Name: name, Action: a})
	}
	return append(cs, reconciler.Change{Cluster: cluster, Kind: "Service", Namespace: "demo", Name: "derived-" + name, Action: "create"})
}

// sync --watch tells each object it writes in one line: time, cluster, kind, object, actions.
func TestChangeLogLines(t *testing.T) {
	var out bytes.Buffer
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	l := &changeLog{out: &out, now: func() time.Time { return at }}
	l.changes(importChanges("member2", "serve"))
	want := []string{
		"2026-11-25T07:00:00Z member2 ServiceImport demo/serve create,status,update",
		"2026-11-25T07:00:00Z member2 Service demo/derived-serve create",
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
		l.changes(importChanges("member1", fmt.Sprintf("s%d", i)))
	}
	l.flush() // the same second: nothing yet
	at = at.Add(time.Second)
	l.flush()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != linesPerSecond+1 {
		t.Fatalf("%d lines, want %d and a summary:\n%s", len(lines), linesPerSecond, out.String())
	}
	// 60 objects: 20 lines, then the other 40 in one.
	if last := lines[len(lines)-1]; last != "2026-11-25T07:00:02Z  and 40 more objects: 40 created (ServiceImport 20, Service 20), 0 updated, 0 deleted" {
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
}
