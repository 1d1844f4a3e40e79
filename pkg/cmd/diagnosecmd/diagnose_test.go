package diagnosecmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// diagnose SERVICE of a service no member holds fails in one line naming it, as status SERVICE
// does, instead of printing "N passed" and exiting 0.
func TestFinish(t *testing.T) {
	clusters := []status.ClusterInfo{{Name: "member1", State: snapshot.Reachable}, {Name: "member2", State: snapshot.Reachable}}
	ok := diagnose.Result{Check: diagnose.CheckReachable, Cluster: "member1", Severity: diagnose.OK, Message: "the API server answers"}
	down := diagnose.Result{Check: diagnose.CheckReachable, Cluster: "member2", Severity: diagnose.Fail, Message: "unreachable", Fix: "start it"}
	const notFound = "service demo/nosuch is neither exported nor imported in any cluster that could be read (member1, member2)"
	for _, tc := range []struct {
		name      string
		missing   bool
		results   []diagnose.Result
		wantErr   string
		wantPrint bool
	}{
		{"found, passing", false, []diagnose.Result{ok}, "", true},
		{"found, failing", false, []diagnose.Result{ok, down}, "1 of 2 checks failed", true},
		{"missing", true, []diagnose.Result{ok}, notFound, false},
		{"missing, and a check failed", true, []diagnose.Result{ok, down}, notFound, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &Options{Service: "nosuch", namespace: "demo", IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
			rep := diagnose.NewReport(clusters, tc.results)
			rep.Missing = tc.missing
			err := o.finish(rep)
			if (tc.wantErr == "") != (err == nil) || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if printed := strings.Contains(out.String(), "passed"); printed != tc.wantPrint {
				t.Errorf("report printed: %v, want %v:\n%s", printed, tc.wantPrint, out.String())
			}
		})
	}
}
