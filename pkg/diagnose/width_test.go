package diagnose

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// diagnose's text fits printers.Width for the typical clusterset, a member unreachable with a
// whole connection error among the failures: the error wraps with the result.
func TestWidth(t *testing.T) {
	s := healthy()
	memberOf(s, "member2").ServedVersions = []string{"v1alpha1"}
	m := memberOf(s, "member3")
	m.Cluster = snapshot.Cluster{ID: "member3", Context: "member3", State: snapshot.Unreachable,
		Message: `Get "https://127.0.0.1:41577/apis/multicluster.x-k8s.io/v1beta1/serviceimports?limit=500&timeout=32s": dial tcp 127.0.0.1:41577: connect: connection refused`}
	var b bytes.Buffer
	for _, o := range []TextOptions{{}, {Symbols: true, Color: true}} {
		if err := PrintText(&b, Run(s), o); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range printers.LongLines(b.String(), printers.Width) {
		t.Error(l)
	}
	if !strings.Contains(b.String(), "connection refused") {
		t.Errorf("no connection error:\n%s", b.String())
	}
}
