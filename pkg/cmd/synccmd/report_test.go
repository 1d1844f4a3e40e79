package synccmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// A pass that ends in an error never says "No changes." before it: the writes it wanted were not
// made. What it did write, and the conflicts, are still printed.
func TestReportOfAFailedPass(t *testing.T) {
	conflict := engine.Conflict{Namespace: "shop", Service: "cart", Reason: "PortConflict", Winner: "member3", Disagreeing: []string{"member1"}, Total: 2,
		Message: `Conflicting ports. Using "80/TCP as tcp-80" from oldest service export in "member3" and "8080-8080:8080/TCP" from service export in "member1". 1/2 clusters disagree.`}
	for _, tc := range []struct {
		name      string
		rep       Report
		failed    bool
		want, not []string
	}{
		{"failed, nothing written", Report{Conflicts: []engine.Conflict{conflict}}, true, []string{"PortConflict"}, []string{"No changes."}},
		{"failed after some writes", Report{Changes: []ChangeRow{{Cluster: "member2", Kind: "ServiceImport", Object: "shop/cart", Action: "update"}}}, true,
			[]string{"member2", "ServiceImport", "No conflicts."}, []string{"No changes."}},
		{"nothing to do", Report{}, false, []string{"No changes.\n\nNo conflicts.\n"}, []string{"created"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
			if err := o.printReport(tc.rep, tc.failed); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output says %q:\n%s", n, out.String())
				}
			}
		})
	}
}

// One row per object with its writes joined (a ServiceImport is created, given its status, then
// updated with the derived Service's IP: one row, not three), and a summary line at the end.
func TestReportOneRowPerObject(t *testing.T) {
	var changes []ChangeRow
	for _, c := range []string{"member1", "member2"} {
		for _, a := range []string{"create", "status", "update"} {
			changes = append(changes, ChangeRow{Cluster: c, Kind: "ServiceImport", Object: "demo/serve", Action: a, Service: "demo/serve"})
		}
		changes = append(changes, ChangeRow{Cluster: c, Kind: "Service", Object: "demo/derived-serve", Action: "create", Service: "demo/serve"},
			ChangeRow{Cluster: c, Kind: "EndpointSlice", Object: "demo/derived-serve-member1-abc", Action: "create", Service: "demo/serve"})
	}
	changes = append(changes, ChangeRow{Cluster: "member1", Kind: "ServiceExport", Object: "demo/serve", Action: "status", Service: "demo/serve"},
		ChangeRow{Cluster: "member2", Kind: "EndpointSlice", Object: "demo/derived-serve-member3-def", Action: "delete", Service: "demo/serve"},
		ChangeRow{Cluster: "member2", Kind: "EndpointSlice", Object: "demo/derived-serve-member3-ghi", Action: "delete", Service: "demo/serve"},
		ChangeRow{Cluster: "member2", Kind: "Service", Object: "demo/derived-web", Action: "delete", Service: "demo/web"},
		ChangeRow{Cluster: "member2", Kind: "Service", Object: "demo/derived-web", Action: "create", Service: "demo/web"})
	rep := Report{Changes: changes}
	rep.Summary = summarize(changes, 0)
	var out bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
	if err := o.printReport(rep, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"member1 ServiceImport demo/serve create,status,update",
		"member1 Service demo/serve create",
		"member1 EndpointSlice demo/serve create",
		"member2 ServiceImport demo/serve create,status,update",
		"member2 Service demo/serve create",
		"member2 EndpointSlice demo/serve create",
		"member1 ServiceExport demo/serve status",
		"member2 EndpointSlice(2) demo/serve delete",
		"member2 Service demo/web delete,create",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	summary := "6 created (ServiceImport 2, Service 2, EndpointSlice 2), 2 updated (Service 1,\nServiceExport 1), 2 deleted (EndpointSlice 2); 0 conflicts."
	if last := strings.Join(lines[len(lines)-2:], "\n"); last != summary {
		t.Errorf("last line %q, want %q", last, summary)
	}
	if rep.Summary.Created["ServiceImport"] != 2 || rep.Summary.Deleted["EndpointSlice"] != 2 || rep.Summary.Updated["Service"] != 1 {
		t.Errorf("summary %+v", rep.Summary)
	}
}
