//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestInitIsIdempotent(t *testing.T) {
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	before := map[string]string{}
	for _, c := range members {
		u, err := clients[c].dyn.Resource(crd).Get(context.Background(), "serviceexports.multicluster.x-k8s.io", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: CRD not installed by init: %v", c, err)
		}
		if u.GetLabels()[managedBy] != "kubectl-mcs" {
			t.Fatalf("%s: CRD lacks the managed-by label: %v", c, u.GetLabels())
		}
		before[c] = u.GetResourceVersion()
	}
	// A second init changes nothing, and says so in kubectl's word.
	r := mustMCS(t, "init", "--contexts", strings.Join(members, ","))
	if got := strings.Count(r.stdout, "customresourcedefinition.apiextensions.k8s.io/"); got != 2*len(members) ||
		strings.Count(r.stdout, " unchanged\n") != strings.Count(r.stdout, "\n") || strings.Contains(r.stdout, "serverside-applied") {
		t.Fatalf("want %d CRD lines, every line unchanged, got:\n%s", 2*len(members), r.stdout)
	}
	for _, c := range members {
		u, _ := clients[c].dyn.Resource(crd).Get(context.Background(), "serviceexports.multicluster.x-k8s.io", metav1.GetOptions{})
		if u.GetResourceVersion() != before[c] {
			t.Errorf("%s: a second init changed the CRD (resourceVersion %s -> %s)", c, before[c], u.GetResourceVersion())
		}
	}
	// Both versions are served, so v1beta1 is what expose writes.
	r = mustMCS(t, "init", "--contexts", "member1", "--dry-run=client", "-o", "yaml")
	if !strings.Contains(r.stdout, "# cluster: member1") || !strings.Contains(r.stdout, "kind: CustomResourceDefinition") {
		t.Fatalf("dry-run yaml output unexpected:\n%s", r.stdout)
	}
}

func TestExposeDirectRoundTrip(t *testing.T) {
	ns := namespace(t, "e2e-direct", members...)
	service(t, "member1", ns, "serve")
	service(t, "member2", ns, "serve")
	all := strings.Join(members, ",")

	r := mustMCS(t, "expose", "serve", "-n", ns, "--contexts", all, "--exported-labels", "tier=web")
	for _, c := range []string{"member1", "member2"} {
		se := get(t, c, seGVR("v1beta1"), ns, "serve")
		if se == nil {
			t.Fatalf("%s: no ServiceExport after expose; output:\n%s", c, r.stdout)
		}
		if se.GetLabels()[managedBy] != "kubectl-mcs" {
			t.Errorf("%s: ServiceExport lacks managed-by label", c)
		}
		if v, _, _ := unstructured.NestedString(se.Object, "spec", "exportedLabels", "tier"); v != "web" {
			t.Errorf("%s: exportedLabels not written: %v", c, se.Object["spec"])
		}
		if !strings.Contains(r.stdout, c+": serviceexport.multicluster.x-k8s.io/serve created") {
			t.Errorf("output does not report %s:\n%s", c, r.stdout)
		}
	}
	if get(t, "member3", seGVR("v1beta1"), ns, "serve") != nil {
		t.Fatal("member3 has no Service, yet got a ServiceExport")
	}

	// Expose again: idempotent, nothing changes.
	rv := get(t, "member1", seGVR("v1beta1"), ns, "serve").GetResourceVersion()
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", all, "--exported-labels", "tier=web")
	if got := get(t, "member1", seGVR("v1beta1"), ns, "serve").GetResourceVersion(); got != rv {
		t.Errorf("second expose rewrote the ServiceExport (%s -> %s)", rv, got)
	}

	// A ServiceExport made by hand elsewhere is left alone by unexpose.
	service(t, "member3", ns, "serve") // now member3 would export too, but the export there is the user's
	userSE := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": "serve", "namespace": ns},
	}}
	if _, err := clients["member3"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Create(context.Background(), userSE, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = mustMCS(t, "unexpose", "serve", "-n", ns, "--contexts", all)
	for _, c := range []string{"member1", "member2"} {
		if get(t, c, seGVR("v1beta1"), ns, "serve") != nil {
			t.Errorf("%s: ServiceExport still there after unexpose", c)
		}
	}
	if get(t, "member3", seGVR("v1beta1"), ns, "serve") == nil {
		t.Fatal("unexpose deleted a ServiceExport it did not create")
	}
	if !strings.Contains(r.stderr, `cluster "member3"`) || !strings.Contains(r.stderr, "left alone") {
		t.Errorf("unexpose should say it left member3's export alone; stderr:\n%s", r.stderr)
	}
	// Expose refuses to take over the user's export.
	r = mcs("expose", "serve", "-n", ns, "--contexts", all)
	if r.code != 1 || !strings.Contains(r.stderr, `cluster "member3"`) || !strings.Contains(r.stderr, "not created by kubectl-mcs") {
		t.Fatalf("expose over a user-made export: exit %d, stderr %q", r.code, r.stderr)
	}
	if count(t, seGVR("v1beta1"), ns, "member1", "member2") != 0 {
		t.Fatal("a failed expose wrote ServiceExports")
	}
}

// TestExposeSelector: -l and --all export every selected Service, all checked before any write;
// a name with either, or neither, is refused before anything is read.
func TestExposeSelector(t *testing.T) {
	ns := namespace(t, "e2e-selector", members...)
	backend := func(s *corev1.Service) { s.Labels = map[string]string{"tier": "backend"} }
	service(t, "member1", ns, "api", backend)
	service(t, "member2", ns, "db", backend)
	service(t, "member1", ns, "web")
	service(t, "member2", ns, "ext", backend, func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName, s.Spec.Selector, s.Spec.Ports = corev1.ServiceTypeExternalName, "example.com", nil, nil
	})
	for _, bad := range [][]string{{"api", "-l", "tier=backend"}, {"-l", "tier=backend", "--all"}, {}} {
		if r := mcs(append([]string{"expose", "-n", ns, "--contexts", allMembers}, bad...)...); r.code != 1 || !strings.HasPrefix(r.stderr, "error: ") {
			t.Errorf("expose %v: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
	// The ExternalName Service is selected too: with --strict the command fails, naming it, and
	// writes nothing.
	r := mcs("expose", "-l", "tier=backend", "-n", ns, "--contexts", allMembers, "--strict")
	if r.code != 1 || !strings.Contains(r.stderr, `cluster "member2": service `+ns+`/ext is of type ExternalName`) {
		t.Fatalf("--strict selector with an ExternalName Service: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := count(t, seGVR("v1beta1"), ns, "member1", "member2", "member3"); n != 0 {
		t.Fatalf("a refused selection wrote %d ServiceExports", n)
	}
	// Without it, the ExternalName Service is skipped with one warning and the rest exported.
	wantWarning := `Warning: cluster "member2": service ` + ns + `/ext is of type ExternalName, which cannot be exported (KEP-1645); skipped (--strict fails instead)` + "\n"
	r = mustMCS(t, "expose", "-l", "tier=backend", "-n", ns, "--contexts", allMembers, "-o", "name")
	if r.stdout != "member1: serviceexport.multicluster.x-k8s.io/api\nmember2: serviceexport.multicluster.x-k8s.io/db\n" || r.stderr != wantWarning {
		t.Errorf("-l tier=backend -o name: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if get(t, "member2", seGVR("v1beta1"), ns, "ext") != nil {
		t.Error("-l exported the ExternalName Service")
	}
	if get(t, "member1", seGVR("v1beta1"), ns, "web") != nil {
		t.Error("-l exported a Service it does not select")
	}
	// --all: web too, and never sync's derived Services.
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	r = mustMCS(t, "expose", "--all", "-n", ns, "--contexts", allMembers, "-o", "name")
	if strings.Contains(r.stdout, "derived-") || !strings.Contains(r.stdout, "member1: serviceexport.multicluster.x-k8s.io/web\n") || r.stderr != wantWarning {
		t.Errorf("--all -o name: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// default/kubernetes is each member's own API server: --all leaves it out, with one warning.
	r = mcs("expose", "--all", "-n", "default", "--contexts", allMembers, "--dry-run=server", "-o", "name")
	if strings.Contains(r.stdout, "/kubernetes\n") ||
		!strings.Contains(r.stderr, "Warning: service default/kubernetes is each cluster's own API server, which --all leaves out (name it to export it)\n") ||
		strings.Count(r.stderr, "default/kubernetes") != 1 {
		t.Errorf("--all -n default: exit %d, stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestExposeProvidersAndDryRun(t *testing.T) {
	ns := namespace(t, "e2e-providers", members...)
	service(t, "member1", ns, "serve")
	service(t, "member2", ns, "serve")
	r := mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member1,member2", "--providers", "member2", "-o", "name")
	if strings.TrimSpace(r.stdout) != "member2: serviceexport.multicluster.x-k8s.io/serve" {
		t.Fatalf("-o name output: %q", r.stdout)
	}
	if get(t, "member1", seGVR("v1beta1"), ns, "serve") != nil || get(t, "member2", seGVR("v1beta1"), ns, "serve") == nil {
		t.Fatal("--providers=member2 must export from member2 only")
	}
	for _, mode := range []string{"client", "server"} {
		r = mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member1", "--dry-run="+mode, "-o", "json")
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Items) != 1 {
			t.Fatalf("dry-run=%s -o json: %v\n%s", mode, err, r.stdout)
		}
		if get(t, "member1", seGVR("v1beta1"), ns, "serve") != nil {
			t.Fatalf("--dry-run=%s wrote the ServiceExport", mode)
		}
	}
}

// TestKarmadaObjectsStrictSchema proves that every object kind expose --karmada generates is
// accepted by Karmada's real CRD schemas with strict field validation.
func TestKarmadaObjectsStrictSchema(t *testing.T) {
	needKarmada(t)
	ns := namespace(t, "e2e-karmada", karmadaCtx)
	service(t, karmadaCtx, ns, "serve")
	// A workload for --workload; the control plane has no nodes to run it, which is fine.
	if out, err := runKubectl(karmadaCtx, "-n", ns, "create", "deployment", "serve", "--image=jeremyot/serve:0a40de8"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	runs := [][]string{
		{"--api=multiclusterservice", "--type=CrossCluster", "--ports=http:80", "--providers=member1", "--consumers=member2,member3"},
		{"--api=serviceexport", "--providers=member1", "--consumers=member2", "--propagate", "--workload=deployment/serve"},
	}
	kinds := map[string]bool{}
	for _, flags := range runs {
		// What expose would write, fed to the apiserver by the test itself with strict validation.
		args := append([]string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--dry-run=client", "-o", "json"}, flags...)
		r := mustMCS(t, args...)
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		for _, item := range list.Items {
			u := &unstructured.Unstructured{Object: item}
			gvr := gvrOf(t, u)
			u.SetName(u.GetName() + "-strict")
			_, err := clients[karmadaCtx].dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Errorf("%s %s rejected by Karmada's schema: %v", u.GetKind(), u.GetName(), err)
			}
			kinds[u.GetKind()] = true
		}
		// Then for real, through the plugin (which applies with strict validation too).
		mustMCS(t, append([]string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx}, flags...)...)
	}
	for _, k := range []string{"MultiClusterService", "ServiceExport", "ServiceImport", "PropagationPolicy"} {
		if !kinds[k] {
			t.Errorf("expose --karmada never generated a %s", k)
		}
	}
	// Strictness is real: an unknown field is rejected by the same apiserver.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterService",
		"metadata": map[string]any{"name": "bad", "namespace": ns},
		"spec":     map[string]any{"types": []any{"CrossCluster"}, "providerCluster": []any{}},
	}}
	if _, err := clients[karmadaCtx].dyn.Resource(mcsGVR).Namespace(ns).Create(context.Background(), bad, metav1.CreateOptions{FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatal("the control plane accepted an unknown field: the strict check proves nothing")
	}

	m := get(t, karmadaCtx, mcsGVR, ns, "serve")
	if m == nil {
		t.Fatal("no MultiClusterService written")
	}
	if p, _, _ := unstructured.NestedSlice(m.Object, "spec", "providerClusters"); len(p) != 1 {
		t.Errorf("providerClusters = %v", p)
	}
	si := get(t, karmadaCtx, siGVR("v1alpha1"), ns, "serve")
	if si == nil {
		t.Fatal("no v1alpha1 ServiceImport written (Karmada matches on v1alpha1)")
	}
	if typ, _, _ := unstructured.NestedString(si.Object, "spec", "type"); typ != "ClusterSetIP" {
		t.Errorf("ServiceImport type = %q", typ)
	}
	for name, want := range map[string]string{"serve-export-policy": "member1", "serve-import-policy": "member2", "serve-workload-policy": "member1"} {
		pp := get(t, karmadaCtx, ppGVR, ns, name)
		if pp == nil {
			t.Fatalf("PropagationPolicy %s missing", name)
		}
		cl, _, _ := unstructured.NestedStringSlice(pp.Object, "spec", "placement", "clusterAffinity", "clusterNames")
		if len(cl) != 1 || cl[0] != want {
			t.Errorf("%s places in %v, want [%s]", name, cl, want)
		}
	}
	wl := get(t, karmadaCtx, ppGVR, ns, "serve-workload-policy")
	sel, _, _ := unstructured.NestedSlice(wl.Object, "spec", "resourceSelectors")
	if len(sel) != 2 || sel[1].(map[string]any)["apiVersion"] != "apps/v1" || sel[1].(map[string]any)["kind"] != "Deployment" {
		t.Errorf("workload selectors = %v", sel)
	}

	r := mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
	for _, gvr := range []schema.GroupVersionResource{mcsGVR, seGVR("v1alpha1"), siGVR("v1alpha1"), ppGVR} {
		if n := count(t, gvr, ns, karmadaCtx); n != 0 {
			t.Errorf("%d %s left after unexpose; output:\n%s", n, gvr.Resource, r.stdout)
		}
	}
}

// TestBadInput: every bad input of SPEC section 3 exits 1 with one line naming the cluster or
// object, and nothing is written anywhere.
func TestBadInput(t *testing.T) {
	ns := namespace(t, "e2e-bad", members...)
	service(t, "member1", ns, "serve")
	service(t, "member2", ns, "ext", func(s *corev1.Service) {
		s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.org"}
	})
	service(t, "member1", ns, "ext")
	all := strings.Join(members, ",")
	check := func(t *testing.T, c badCase) {
		r := mcs(c.args...)
		if r.code != 1 {
			t.Fatalf("exit code %d, want 1; stderr %q", r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if len(lines) != 1 {
			t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr %q does not mention %q", r.stderr, w)
			}
		}
	}
	cases := []badCase{
		{"missing service in named provider", []string{"expose", "serve", "-n", ns, "--contexts", all, "--providers", "member1,member2"}, []string{`cluster "member2"`, "serve", "not found"}},
		{"missing everywhere", []string{"expose", "nope", "-n", ns, "--contexts", all}, []string{"nope", "not found in any cluster"}},
		{"ExternalName", []string{"expose", "ext", "-n", ns, "--contexts", all}, []string{`cluster "member2"`, "ExternalName"}},
		{"--strict without a selection", []string{"expose", "ext", "-n", ns, "--contexts", all, "--strict"}, []string{"--strict goes with -l or --all"}},
		{"unknown context", []string{"expose", "serve", "-n", ns, "--contexts", "member1,nosuch"}, []string{`"nosuch"`, "not found in kubeconfig"}},
		{"invalid cluster ID", []string{"expose", "serve", "-n", ns, "--contexts", "member1=Member_1"}, []string{`"Member_1"`, "RFC 1123"}},
		{"no clusterset", []string{"expose", "serve", "-n", ns}, []string{"--contexts"}},
		{"provider outside clusterset", []string{"expose", "serve", "-n", ns, "--contexts", "member1", "--providers", "member9"}, []string{`"member9"`, "not in the clusterset"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c) })
	}
	if n := count(t, seGVR("v1beta1"), ns, members...); n != 0 {
		t.Errorf("bad input wrote %d ServiceExports", n)
	}
	t.Run("karmada", func(t *testing.T) {
		needKarmada(t)
		ns := namespace(t, "e2e-bad-karmada", karmadaCtx)
		service(t, karmadaCtx, ns, "serve")
		for _, c := range karmadaCases(ns) {
			t.Run(c.name, func(t *testing.T) { check(t, c) })
		}
		for _, gvr := range []schema.GroupVersionResource{mcsGVR, ppGVR, seGVR("v1alpha1"), siGVR("v1alpha1")} {
			if n := count(t, gvr, ns, karmadaCtx); n != 0 {
				t.Errorf("bad input wrote %d %s on the control plane", n, gvr.Resource)
			}
		}
	})
}

// badCase is a command that must fail with one line naming what is at fault.
type badCase struct {
	name string
	args []string
	want []string
}

func karmadaCases(ns string) []badCase {
	return []badCase{
		{"karmada bad name", []string{"expose", "Serve", "-n", ns, "--karmada-context", karmadaCtx}, []string{`"Serve"`}},
		{"karmada bad port", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--ports", "http:70000"}, []string{"70000", "1-65535"}},
		{"karmada duplicate port name", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--ports", "http:80,http:81"}, []string{`"http"`, "unique"}},
		{"karmada bad type", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--type", "NodePort"}, []string{`"NodePort"`, "CrossCluster"}},
		{"karmada duplicate type", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--type", "CrossCluster,CrossCluster"}, []string{"twice"}},
		{"karmada missing service", []string{"expose", "nope", "-n", ns, "--karmada-context", karmadaCtx}, []string{`cluster "karmada"`, "nope", "not found"}},
		{"karmada exported labels without a ServiceExport", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--exported-labels", "tier=web"}, []string{"--exported-labels", "--api=serviceexport"}},
		{"karmada serviceexport without consumers", []string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers=member1"}, []string{"--consumers"}},
	}
}
