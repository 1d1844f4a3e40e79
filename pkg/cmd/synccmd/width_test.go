package synccmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

// typicalSync is the first sync of the service the width rule is measured on: three clusters,
// a 20-character name, two exporters (so two EndpointSlice copies in each cluster), a port
// conflict with its whole message.
func typicalSync() ([]reconciler.Change, []engine.Conflict) {
	const ns, svc = "demo", "checkout-frontend-v2"
	var cs []reconciler.Change
	add := func(cluster, kind, name string, verbs ...string) {
		for _, v := range verbs {
			cs = append(cs, reconciler.Change{Cluster: cluster, Kind: kind, Namespace: ns, Name: name, Action: v, Service: svc})
		}
	}
	for _, c := range []string{"member1", "member2", "member3"} {
		add(c, "ServiceImport", svc, "create", "status", "update")
		add(c, "Service", names.DerivedServiceName(svc), "create")
		for _, src := range []string{"member1", "member2"} {
			add(c, "EndpointSlice", names.EndpointSliceName(svc, src, svc+"-abcde"), "create")
		}
	}
	add("member1", "ServiceExport", svc, "status")
	add("member2", "ServiceExport", svc, "status")
	conflicts := []engine.Conflict{{Namespace: ns, Service: svc, Reason: "PortConflict", Winner: "member1", Disagreeing: []string{"member2"}, Total: 2,
		Message: `Conflicting ports. Using "http:8080/TCP,admin:9090/TCP,metrics:5000/UDP" from oldest service export in "member1". ` +
			`Not using "http:8081/TCP" from "member2". Nothing answers on 8081/TCP. 1/2 clusters disagree.`}}
	return cs, conflicts
}

// sync's report, its --watch lines (with the summary line of a burst) and its conflicts fit
// printers.Width for the typical service; the objects' names stay in -o json.
func TestWidth(t *testing.T) {
	changes, conflicts := typicalSync()
	var out bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}}}
	rows := toChanges(changes)
	if err := o.printReport(Report{Changes: rows, Conflicts: conflicts, Summary: summarize(rows, len(conflicts))}, false); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	l := &changeLog{out: &out, now: func() time.Time { return at }}
	for i := 0; i < 3; i++ { // past linesPerSecond: the rest in a summary line
		l.changes(changes)
	}
	at = at.Add(time.Second)
	l.flush()
	l.conflicts(conflicts)
	for _, line := range printers.LongLines(out.String(), printers.Width) {
		t.Error(line)
	}
	for _, want := range []string{"EndpointSlice(2)   demo/checkout-frontend-v2   create\n", "07:00:00  member3  EndpointSlice(2) demo/checkout-frontend-v2  created\n",
		"and 14 more objects", "\n  Conflicting ports.", "PortConflict   member1   member2\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())

	// A dry run says so once, in the header, and its rows keep the width.
	out.Reset()
	o.Write.DryRun = cmdutil.DryRunClient
	if err := o.printReport(Report{Changes: rows, Conflicts: conflicts, Summary: summarize(rows, len(conflicts))}, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range printers.LongLines(out.String(), printers.Width) {
		t.Error("dry run: " + line)
	}
	if !strings.Contains(out.String(), "ACTION (DRY RUN)\n") || !strings.Contains(out.String(), "; 1 conflicts (dry run).") {
		t.Errorf("a dry run's report does not say so:\n%s", out.String())
	}
}
