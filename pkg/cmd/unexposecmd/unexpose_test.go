package unexposecmd

import (
	"bytes"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/export"
)

// unexpose of what was never exposed says so instead of exiting 0 in silence; a real one says
// that sync withdraws the imports.
func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deleted int
		karmada bool
		dryRun  cmdutil.DryRunStrategy
		want    string
	}{
		{"never exposed", 0, false, cmdutil.DryRunNone, "Nothing to remove: no object of kubectl mcs expose for demo/serve was found.\n"},
		{"never exposed, Karmada", 0, true, cmdutil.DryRunNone, "Nothing to remove: no object of kubectl mcs expose for demo/serve was found.\n"},
		{"removed", 2, false, cmdutil.DryRunNone, "The next kubectl mcs sync withdraws what demo/serve's exports imported (at once where sync --watch runs).\n"},
		{"removed, Karmada", 1, true, cmdutil.DryRunNone, ""},
		{"dry run", 2, false, cmdutil.DryRunClient, ""},
	} {
		var out, errOut bytes.Buffer
		o := &Options{Target: export.Target{Namespace: "demo", Service: "serve", Karmada: tc.karmada}, Write: apply.Flags{DryRun: tc.dryRun},
			IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
		o.summarize(tc.deleted)
		if errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%s: stderr %q, stdout %q; want stderr %q", tc.name, errOut.String(), out.String(), tc.want)
		}
	}
}
