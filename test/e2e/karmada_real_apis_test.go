//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// memberLists says whether Karmada's Cluster c lists multicluster.x-k8s.io/v1alpha1 KIND.
func memberLists(c, kind string) (bool, error) {
	u, err := clients[karmadaCtx].dyn.Resource(clusterGVR).Get(context.Background(), c, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	ens, _, _ := unstructured.NestedSlice(u.Object, "status", "apiEnablements")
	for _, e := range ens {
		m, _ := e.(map[string]any)
		if m["groupVersion"] != "multicluster.x-k8s.io/v1alpha1" {
			continue
		}
		rs, _ := m["resources"].([]any)
		for _, r := range rs {
			if rm, _ := r.(map[string]any); rm["kind"] == kind {
				return true, nil
			}
		}
	}
	return false, nil
}

// TestKarmadaRealMemberWithoutTheCRDs is seed 001/004 without its first step: member3 serves no
// mcs-api CRDs, so expose toward it fails naming it and the API, and writes nothing; once
// kubectl mcs init installed them and Karmada listed them, expose goes through and derived-serve
// reaches member3.
func TestKarmadaRealMemberWithoutTheCRDs(t *testing.T) {
	needRealKarmada(t)
	ctx := context.Background()
	crds := []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"}
	t.Cleanup(func() { mcs("init", "--contexts", "member3") }) // as TestMain left it, for the tests after
	for _, n := range crds {
		if err := clients["member3"].dyn.Resource(crdGVR).Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	eventually(t, "Karmada to see that member3 serves no ServiceImport", func() error {
		if ok, err := memberLists("member3", "ServiceImport"); err != nil || ok {
			return fmt.Errorf("listed %v (%v)", ok, err)
		}
		return nil
	})

	ns := karmadaNamespace(t, "e2e-real-crds")
	serveOnControlPlane(t, ns, 1)
	expose := []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport",
		"--providers=member1", "--consumers=member3", "--propagate", "--workload=deployment/serve"}
	r := mcs(expose...)
	t.Logf("expose toward member3 without the CRDs: exit %d\n%s", r.code, r.stderr)
	if r.code == 0 || !strings.Contains(r.stderr, `member cluster "member3" does not serve multicluster.x-k8s.io/v1alpha1 ServiceImport`) ||
		!strings.Contains(r.stderr, "kubectl mcs init --contexts=member3") {
		t.Fatalf("expose: exit %d\n%s", r.code, r.stderr)
	}
	for _, gvr := range []schema.GroupVersionResource{ppGVR, seGVR("v1alpha1"), siGVR("v1alpha1")} {
		if n := count(t, gvr, ns, karmadaCtx); n != 0 {
			t.Errorf("refused, yet %d %s written", n, gvr.Resource)
		}
	}

	mustMCS(t, "init", "--contexts", "member3")
	eventually(t, "Karmada to list member3's ServiceImport", func() error {
		if ok, err := memberLists("member3", "ServiceImport"); err != nil || !ok {
			return fmt.Errorf("listed %v (%v)", ok, err)
		}
		return nil
	})
	r = mustMCS(t, expose...)
	if strings.Contains(r.stderr, "Warning") {
		t.Errorf("warnings once member3 serves the API:\n%s", r.stderr)
	}
	slicesFollow(t, "member3", ns, "derived-serve", readyPodIPs(t, "member1", ns, 1))
	mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
}
