//go:build traffic

package traffic

// The last test of make test-production (this file sorts after every other of the package, and
// go test runs the files in that order): everything goes, and CoreDNS answers cluster.local
// throughout.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
)

// TestProductionUninstall runs kubectl mcs uninstall --sync-objects --crds --force while the
// client pod in member2 looks up kubernetes.default.svc.cluster.local through the node's CoreDNS:
// no lookup may fail. Then every member is back to what it held before init: the Corefile
// without the kubectl-mcs block, byte for byte; no object labelled kubectl-mcs's, no mcs-api CRD,
// no kubectl-mcs-system; and the objects that are not ours are the ones there were, with the
// same UIDs and resourceVersions.
func TestProductionUninstall(t *testing.T) {
	requireProduction(t)
	ns, _ := served(t, "uninstall", "member1")
	ctx := context.Background()
	want, users := map[string]string{}, map[string]map[string]string{}
	for _, c := range members {
		cur := coreDNSCorefile(t, c)
		if !corefile.Has(cur) {
			t.Fatalf("%s: the Corefile has no kubectl-mcs block before uninstall:\n%s", c, cur)
		}
		var err error
		if want[c], err = corefile.Remove(cur); err != nil {
			t.Fatal(err)
		}
		users[c] = notOurs(t, c)
	}

	lookups := loop(t, ns, "cluster-local", `dig +time=2 +tries=1 kubernetes.default.svc.cluster.local A | grep -q 'status: NOERROR'`)
	r := must(t, mcs("uninstall", "--contexts", strings.Join(members, ","), "--sync-objects", "--crds", "--force"), "kubectl mcs uninstall")
	t.Logf("uninstall:\n%s%s", r.stdout, r.stderr)
	lookups.expectNoFailure(t)

	for _, c := range members {
		if got := coreDNSCorefile(t, c); got != want[c] {
			t.Errorf("%s: the Corefile is\n%s\nwant it as before init --dns:\n%s", c, got, want[c])
		}
		if _, err := clients[c].CoreV1().Namespaces().Get(ctx, systemNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: namespace %s: %v, want it gone", c, systemNS, err)
		}
		for _, k := range ours(t, c) {
			t.Errorf("%s: %s is left", c, k)
		}
		after := notOurs(t, c)
		for k, v := range users[c] {
			if got, ok := after[k]; ok && got != v || !ok && !strings.HasPrefix(k, "serviceexport ") {
				t.Errorf("%s: %s is %q, was %q", c, k, got, v)
			}
		}
	}
}

func coreDNSCorefile(t *testing.T, c string) string {
	t.Helper()
	cm, err := clients[c].CoreV1().ConfigMaps("kube-system").Get(context.Background(), "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return cm.Data["Corefile"]
}

const ourLabel = "app.kubernetes.io/managed-by=kubectl-mcs"

// ours names what carries our labels in c (mcs-api CRDs included).
func ours(t *testing.T, c string) []string {
	t.Helper()
	ctx, k := context.Background(), clients[c]
	sel := metav1.ListOptions{LabelSelector: ourLabel}
	var out []string
	add := func(kind string, err error, names ...string) {
		if err != nil {
			t.Fatalf("%s: listing %s: %v", c, kind, err)
		}
		for _, n := range names {
			out = append(out, kind+" "+n)
		}
	}
	svcs, err := k.CoreV1().Services("").List(ctx, sel)
	add("service", err, itemNames(err == nil, func(yield func(string)) {
		for _, s := range svcs.Items {
			yield(s.Namespace + "/" + s.Name)
		}
	})...)
	slices, err := k.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{LabelSelector: "endpointslice.kubernetes.io/managed-by=kubectl-mcs"})
	add("endpointslice", err, itemNames(err == nil, func(yield func(string)) {
		for _, s := range slices.Items {
			yield(s.Namespace + "/" + s.Name)
		}
	})...)
	crs, err := k.RbacV1().ClusterRoles().List(ctx, sel)
	add("clusterrole", err, itemNames(err == nil, func(yield func(string)) {
		for _, s := range crs.Items {
			yield(s.Name)
		}
	})...)
	crbs, err := k.RbacV1().ClusterRoleBindings().List(ctx, sel)
	add("clusterrolebinding", err, itemNames(err == nil, func(yield func(string)) {
		for _, s := range crbs.Items {
			yield(s.Name)
		}
	})...)
	vaps, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, sel)
	add("validatingadmissionpolicy", err, itemNames(err == nil, func(yield func(string)) {
		for _, s := range vaps.Items {
			yield(s.Name)
		}
	})...)
	for _, crd := range []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"} {
		r := kubectl(nil, c, "get", "crd", crd, "--ignore-not-found", "-o", "name")
		if strings.TrimSpace(r.stdout) != "" {
			out = append(out, "customresourcedefinition "+crd)
		}
	}
	return out
}

func itemNames(ok bool, each func(yield func(string))) []string {
	var out []string
	if ok {
		each(func(s string) { out = append(out, s) })
	}
	return out
}

// notOurs is every Service, EndpointSlice, Deployment, ConfigMap and ServiceAccount of c that is
// not ours, outside kubectl-mcs-system and the namespaces being deleted: KIND NS/NAME -> UID RV.
func notOurs(t *testing.T, c string) map[string]string {
	t.Helper()
	ctx, k := context.Background(), clients[c]
	nss, err := k.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{systemNS: true}
	for _, n := range nss.Items {
		skip[n.Name] = skip[n.Name] || n.DeletionTimestamp != nil
	}
	out := map[string]string{}
	put := func(kind string, m metav1.Object) {
		l := m.GetLabels()
		if skip[m.GetNamespace()] || l["app.kubernetes.io/managed-by"] == "kubectl-mcs" || l["endpointslice.kubernetes.io/managed-by"] == "kubectl-mcs" {
			return
		}
		if kind == "configmap" && m.GetNamespace() == "kube-system" && m.GetName() == "coredns" {
			return // compared by its Corefile
		}
		out[fmt.Sprintf("%s %s/%s", kind, m.GetNamespace(), m.GetName())] = string(m.GetUID()) + " " + m.GetResourceVersion()
	}
	svcs, err := k.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	must0(t, err)
	for i := range svcs.Items {
		put("service", &svcs.Items[i])
	}
	eps, err := k.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	must0(t, err)
	for i := range eps.Items {
		put("endpointslice", &eps.Items[i])
	}
	deps, err := k.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	must0(t, err)
	for i := range deps.Items {
		put("deployment", &deps.Items[i])
	}
	cms, err := k.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	must0(t, err)
	for i := range cms.Items {
		put("configmap", &cms.Items[i])
	}
	sas, err := k.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{})
	must0(t, err)
	for i := range sas.Items {
		put("serviceaccount", &sas.Items[i])
	}
	return out
}

func must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
