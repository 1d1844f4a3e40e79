//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// init --dns=false removes the Corefile block and nothing else: on a member whose CRDs were
// removed (an uninstall), it leaves them removed. It installed them again before.
func TestInitDNSFalseInstallsNothing(t *testing.T) {
	const c = "member3"
	setCorefile(t, c, kubeadmCorefile)
	crds := []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"}
	t.Cleanup(func() { mustMCS(t, "init", "--contexts", c) }) // the other tests need them
	for _, n := range crds {
		if err := clients[c].dyn.Resource(crdGVR).Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	absent := func() bool {
		for _, n := range crds {
			if _, err := clients[c].dyn.Resource(crdGVR).Get(context.Background(), n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	}
	waitFor(t, c+"'s CRDs gone", absent)

	r := mustMCS(t, "init", "--contexts", c, "--dns=false")
	if !absent() {
		t.Errorf("init --dns=false installed the CRDs again:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, c+": configmap/coredns unchanged") || strings.Contains(r.stdout, "customresourcedefinition") {
		t.Errorf("init --dns=false output:\n%s", r.stdout)
	}
}
