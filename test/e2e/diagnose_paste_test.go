//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
)

// pasteFix runs, as a user pasting them into a shell would, the commands of the failed result of
// check in cluster: each line of -o json's commands through sh, with the plugin on PATH as
// kubectl-mcs and the suite's kubeconfig. It returns their output.
func pasteFix(t *testing.T, rep *diagnose.Report, check, cluster string) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "kubectl-mcs")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, x := range rep.Results {
		if x.Check != check || x.Cluster != cluster || x.Severity != diagnose.Fail {
			continue
		}
		if len(x.Commands) == 0 {
			t.Fatalf("%s %s: no command to paste (fix %q)", check, cluster, x.Fix)
		}
		for _, c := range x.Commands {
			cmd := exec.Command("sh", "-c", c.String())
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig, "KUBECTL_MCS_CONTEXTS=")
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pasted %q: %v\n%s", c.String(), err, b)
			}
			out.Write(b)
		}
		return out.String()
	}
	t.Fatalf("no failed %s in %q:\n%s", check, cluster, failures(rep))
	return ""
}

// TestDiagnoseFixCommandsPaste: the commands diagnose prints run as printed against the bed and
// do what the fix says (the full stop of a sentence once made them fail: a label value "serve."
// refused, a context "member2." not found).
func TestDiagnoseFixCommandsPaste(t *testing.T) {
	ns := seedService(t, "e2e-diag-paste")
	ctx := context.Background()

	// The user's own export of a Service that does not exist: the printed delete removes it.
	userExport(t, "member2", ns, "ghost")
	rep := diagnoseOnly(t, ns, "ghost")
	pasteFix(t, rep, diagnose.CheckExportService, "member2")
	if _, err := clients["member2"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Get(ctx, "ghost", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pasted fix left ServiceExport %s/ghost in member2: %v", ns, err)
	}
	// One expose wrote: the printed unexpose removes it.
	service(t, "member2", ns, "gone")
	mustMCS(t, "expose", "gone", "-n", ns, "--contexts", "member2")
	if err := clients["member2"].kube.CoreV1().Services(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pasteFix(t, diagnoseOnly(t, ns, "gone"), diagnose.CheckExportService, "member2")
	if _, err := clients["member2"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pasted unexpose left ServiceExport %s/gone in member2: %v", ns, err)
	}

	// The derived Service deleted: the printed sync recreates it, and diagnose passes again.
	if err := clients["member3"].kube.CoreV1().Services(ns).Delete(ctx, "derived-serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pasteFix(t, diagnoseOnly(t, ns, "serve"), diagnose.CheckDerived, "member3")
	if rep := diagnoseOnly(t, ns, "serve"); rep.Summary.Failed != 0 {
		t.Errorf("after the pasted sync:\n%s", failures(rep))
	}

	// No endpoint: the printed get lists the Service's slices (the label value once ended with
	// the sentence's full stop, and the apiserver refused it).
	service(t, "member1", ns, "idle")
	mustMCS(t, "expose", "idle", "-n", ns, "--contexts", "member1")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if out := pasteFix(t, diagnoseOnly(t, ns, "idle"), diagnose.CheckEndpoints, "member1"); !strings.Contains(out, "idle-") {
		t.Errorf("the pasted get listed no slice of idle:\n%s", out)
	}
}

// diagnoseOnly is diagnose -o json of one service over the suite's members (diagnoseJSON without
// its check that nothing was written, which the bed's controllers may race here).
func diagnoseOnly(t *testing.T, ns, svc string) *diagnose.Report {
	t.Helper()
	r := mcs("diagnose", svc, "-n", ns, "--contexts", allMembers, "-o", "json")
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("diagnose -o json: exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	return &rep
}
