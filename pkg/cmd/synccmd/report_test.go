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
		{"nothing to do", Report{}, false, []string{"No changes.\n\nNo conflicts.\n"}, nil},
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
