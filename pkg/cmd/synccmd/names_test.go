package synccmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// sync takes -o name, as every writing command does.
func TestOutputNameAccepted(t *testing.T) {
	f := outputFlags()
	f.Format = "name"
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
}

// -o name: one line per object written, whatever its writes, named as kubectl names it.
func TestPrintNames(t *testing.T) {
	var out bytes.Buffer
	cs := append(toChanges(importChanges("member2", "serve")), ChangeRow{Cluster: "member1", Kind: "EndpointSlice", Object: "demo/serve-abc", Action: "delete"},
		ChangeRow{Cluster: "member1", Kind: "ServiceExport", Object: "demo/serve", Action: "status"})
	if err := printNames(&out, cs); err != nil {
		t.Fatal(err)
	}
	want := "member2: serviceimport.multicluster.x-k8s.io/serve\n" +
		"member2: service/derived-serve\n" +
		"member1: endpointslice.discovery.k8s.io/serve-abc\n" +
		"member1: serviceexport.multicluster.x-k8s.io/serve\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// sync --watch -o name: the same lines as the writes come, never summed up; the conflicts go to
// stderr, one warning each.
func TestChangeLogNames(t *testing.T) {
	var out, errOut bytes.Buffer
	l := &changeLog{out: &out, errOut: &errOut, format: "name", now: func() time.Time { return time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC) }}
	for range linesPerSecond + 1 {
		l.changes(importChanges("member2", "serve"))
	}
	l.flush()
	if n := bytes.Count(out.Bytes(), []byte("member2: serviceimport.multicluster.x-k8s.io/serve\n")); n != linesPerSecond+1 {
		t.Errorf("%d import lines, want %d:\n%s", n, linesPerSecond+1, out.String())
	}
	l.conflicts([]engine.Conflict{{Namespace: "demo", Service: "web", Reason: "TypeConflict", Message: "Conflicting type."}})
	if errOut.String() != "Warning: TypeConflict in demo/web: Conflicting type.\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}
