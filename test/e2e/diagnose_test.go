//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
)

// watched are the kinds whose resourceVersions prove diagnose wrote nothing: everything it reads
// or could write (SelfSubjectAccessReviews are never stored). Pods, ReplicaSets and Events are left
// out: the test bed's controllers may touch them at any time.
var (
	watchedNamespaced = []schema.GroupVersionResource{
		{Version: "v1", Resource: "services"}, {Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "serviceaccounts"},
		{Version: "v1", Resource: "secrets"}, {Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
		seGVR("v1beta1"), siGVR("v1beta1"),
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	}
	watchedCluster = []schema.GroupVersionResource{
		{Version: "v1", Resource: "namespaces"}, {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	}
)

// resourceVersions lists every watched object of the members (namespaced ones in ns and
// kube-system) with its resourceVersion, one "member kind ns/name rv" line each.
func resourceVersions(t *testing.T, ns string) []string {
	t.Helper()
	var out []string
	for _, c := range members {
		list := func(gvr schema.GroupVersionResource, in string) {
			l, err := clients[c].dyn.Resource(gvr).Namespace(in).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: list %s: %v", c, gvr.Resource, err)
			}
			for _, o := range l.Items {
				out = append(out, fmt.Sprintf("%s %s %s/%s %s", c, gvr.Resource, o.GetNamespace(), o.GetName(), o.GetResourceVersion()))
			}
		}
		for _, gvr := range watchedNamespaced {
			list(gvr, ns)
			list(gvr, "kube-system")
		}
		for _, gvr := range watchedCluster {
			list(gvr, "")
		}
		// Namespaces of other tests come and go (the namespace controller finalises them).
		out = slices.DeleteFunc(out, func(l string) bool {
			return strings.HasPrefix(l, c+" namespaces ") && !strings.HasPrefix(l, c+" namespaces /"+ns+" ") && !strings.HasPrefix(l, c+" namespaces /kube-system ")
		})
	}
	sort.Strings(out)
	return out
}

// diagnoseRun runs diagnose with kc (the suite's kubeconfig when empty) and asserts it wrote
// nothing in any member: every watched resourceVersion is the same before and after.
func diagnoseRun(t *testing.T, kc, ns string, args ...string) result {
	t.Helper()
	if kc == "" {
		kc = kubeconfig
	}
	before := resourceVersions(t, ns)
	cmd := exec.Command(binary, append([]string{"--kubeconfig", kc, "diagnose"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_MCS_CONTEXTS=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("diagnose: %v", err)
	}
	if diff := diffLines(before, resourceVersions(t, ns)); len(diff) > 0 {
		t.Errorf("diagnose %s wrote to the members:\n%s", strings.Join(args, " "), strings.Join(diff, "\n"))
	}
	return r
}

// diagnoseJSON runs diagnose -o json and decodes the documented schema.
func diagnoseJSON(t *testing.T, kc, ns string, args ...string) (*diagnose.Report, result) {
	t.Helper()
	r := diagnoseRun(t, kc, ns, append([]string{"-o", "json"}, args...)...)
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("diagnose -o json: exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if rep.APIVersion != "mcs.kubectl.io/v1alpha1" || rep.Kind != "DiagnoseReport" {
		t.Errorf("apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	if want := 0; rep.Summary.Failed > 0 {
		want = 1
		if r.code != want {
			t.Errorf("%d failed, exit %d", rep.Summary.Failed, r.code)
		}
	} else if r.code != want {
		t.Errorf("nothing failed, exit %d: %s", r.code, r.stderr)
	}
	return &rep, r
}

func failures(rep *diagnose.Report) string {
	var b strings.Builder
	for _, x := range rep.Results {
		if x.Severity != diagnose.OK {
			fmt.Fprintf(&b, "  %s %s %s %s: %s (fix: %s)\n", x.Severity, x.Check, x.Cluster, x.Object, x.Message, fixText(x))
		}
	}
	return b.String()
}

// wantFailure asserts a failed result of check in cluster whose message and fix hold the texts.
func wantFailure(t *testing.T, rep *diagnose.Report, check, cluster, msg, fix string) {
	t.Helper()
	for _, x := range rep.Results {
		if x.Check == check && x.Cluster == cluster && x.Severity == diagnose.Fail && strings.Contains(x.Message, msg) && strings.Contains(fixText(x), fix) {
			return
		}
	}
	t.Errorf("no failed %s in %q with message %q and fix %q; got:\n%s", check, cluster, msg, fix, failures(rep))
}

// fixText is a result's fix and its commands, one a line.
func fixText(x diagnose.Result) string {
	s := x.Fix
	for _, c := range x.Commands {
		s += "\n" + c.String()
	}
	return s
}

// TestDiagnoseHealthy: the seed scenario passes, in JSON, as text and as JUnit.
func TestDiagnoseHealthy(t *testing.T) {
	ns := seedService(t, "e2e-diag-ok")
	rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
	if rep.Summary.Failed != 0 || rep.Summary.Warnings != 0 {
		t.Fatalf("healthy clusterset:\n%s", failures(rep))
	}
	checks := map[string]int{}
	for _, x := range rep.Results {
		checks[x.Check]++
	}
	for check, n := range map[string]int{diagnose.CheckReachable: 3, diagnose.CheckRBAC: 3, diagnose.CheckExportConds: 1,
		diagnose.CheckImport: 3, diagnose.CheckDerived: 3, diagnose.CheckSlices: 3} {
		if checks[check] != n {
			t.Errorf("%s: %d results, want %d", check, checks[check], n)
		}
	}
	junit := filepath.Join(t.TempDir(), "diagnose.xml")
	r := diagnoseRun(t, "", ns, "serve", "-n", ns, "--contexts", allMembers, "--junit", junit)
	if r.code != 0 || !strings.Contains(r.stdout, "Derived Services (derived-service)\n  ok   member1  service/"+ns+"/derived-serve: exists") ||
		strings.ContainsAny(r.stdout, "✔✖") || !strings.HasSuffix(r.stdout, fmt.Sprintf("%d passed, 0 failed, 0 warnings\n", len(rep.Results))) {
		t.Errorf("exit %d, text:\n%s", r.code, r.stdout)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites diagnose.JUnitSuites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("--junit is not XML: %v\n%s", err, b)
	}
	if suites.Tests != len(rep.Results) || suites.Failures != 0 {
		t.Errorf("junit: %d tests, %d failures; want %d, 0", suites.Tests, suites.Failures, len(rep.Results))
	}
}

// TestDiagnoseFaults: each induced fault fails the check it breaks, with its fix, and diagnose
// writes nothing (diagnoseRun compares every resourceVersion before and after).
func TestDiagnoseFaults(t *testing.T) {
	t.Run("export of a missing Service", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-nosvc")
		userExport(t, "member2", ns, "ghost")
		rep, _ := diagnoseJSON(t, "", ns, "ghost", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckExportService, "member2", "there is no Service "+ns+"/ghost in this cluster", "kubectl --context member2 -n "+ns+" delete serviceexport ghost")
	})
	t.Run("sync not running", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-nosync")
		time.Sleep(2500 * time.Millisecond) // managedFields times have a one-second resolution
		// A change only sync reacts to (no controller of the test bed touches exports).
		patch := []byte(`{"spec":{"exportedLabels":{"tier":"web"}}}`)
		if _, err := clients["member1"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Patch(context.Background(), "serve", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckExportConds, "member1", "after the conditions were last written", "kubectl mcs sync --watch")
		// Once sync has run, it passes again.
		mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
		if rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers, "--wait", "60s"); rep.Summary.Failed != 0 {
			t.Errorf("after sync:\n%s", failures(rep))
		}
	})
	t.Run("deleted derived Service", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-derived")
		if err := clients["member3"].kube.CoreV1().Services(ns).Delete(context.Background(), "derived-serve", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckDerived, "member3", "the derived Service "+ns+"/derived-serve does not exist", "which recreates the derived Service")

		// --wait: runs again until the fix (here sync) has propagated, then exits 0.
		cmd := exec.Command(binary, "--kubeconfig", kubeconfig, "diagnose", "serve", "-n", ns, "--contexts", allMembers, "--wait", "3m")
		var out, errb lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "diagnose --wait to report the failure and wait", func() bool { return strings.Contains(errb.String(), "checking again") })
		mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
		if err := cmd.Wait(); err != nil || !strings.Contains(errb.String(), "check(s) failing (derived-service member3 service/"+ns+"/derived-serve") ||
			!strings.Contains(out.String(), " 0 failed, 0 warnings") {
			t.Errorf("diagnose --wait: %v\nstderr: %s\nstdout: %s", err, errb.String(), out.String())
		}
	})
	t.Run("stale slice", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-stale")
		if out, err := runKubectl("member1", "-n", ns, "scale", "deployment", "serve", "--replicas=1"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		waitFor(t, "member1's slice to lose an endpoint", func() bool { return len(sourceIPs(t, "member1", ns, "serve", true)) == 1 })
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		for _, c := range members {
			wantFailure(t, rep, diagnose.CheckSlices, c, `which "member1" no longer has`, "which replaces copies whose endpoints are gone")
		}
	})
	t.Run("member down", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-down")
		kc := kubeconfigWith(t, map[string]string{"gone": closedPort(t)})
		rep, _ := diagnoseJSON(t, kc, ns, "serve", "-n", ns, "--contexts", allMembers+",gone")
		wantFailure(t, rep, diagnose.CheckReachable, "gone", "unreachable", "kubectl --context gone get --raw /readyz")
		if rep.Summary.Failed != 1 {
			t.Errorf("only the member that is down fails:\n%s", failures(rep))
		}
	})
	t.Run("CRDs missing in one member", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-nocrds")
		kc := kubeconfigWith(t, map[string]string{"plain": noCRDsProxy(t)})
		rep, _ := diagnoseJSON(t, kc, ns, "serve", "-n", ns, "--contexts", allMembers+",plain")
		wantFailure(t, rep, diagnose.CheckCRDs, "plain", "the ServiceExport/ServiceImport CRDs are not installed", "kubectl mcs init --contexts=plain")
	})
	t.Run("conflicting export", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-conflict")
		service(t, "member2", ns, "serve", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
		mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member2")
		mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckConflict, "member2", `Conflicting type. Using "ClusterSetIP" from oldest service export in "member1"`, `agree with the one in "member1"`)
	})
	t.Run("foreign ServiceImport", func(t *testing.T) {
		ns := namespace(t, "e2e-diag-foreign", members...)
		deployment(t, "member1", ns, "serve", 1)
		service(t, "member1", ns, "serve")
		mine := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
			"metadata": map[string]any{"name": "serve", "namespace": ns},
			"spec":     map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}},
		}}
		if _, err := clients["member3"].dyn.Resource(siGVR("v1beta1")).Namespace(ns).Create(context.Background(), mine, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
		mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckImport, "member3", "was not created by kubectl-mcs", "kubectl --context member3 -n "+ns+" delete serviceimport serve")
	})
	t.Run("RBAC without delete on EndpointSlices", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-rbac")
		kc := restrictedKubeconfig(t, ns, "member2")
		rep, _ := diagnoseJSON(t, kc, ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckRBAC, "member2", "missing delete endpointslices.discovery.k8s.io (in namespace "+ns+")", `user of context "member2"`)
		for _, x := range rep.Results {
			if x.Check == diagnose.CheckRBAC && x.Cluster != "member2" && x.Severity != diagnose.OK {
				t.Errorf("%s lacks nothing sync needs: %s", x.Cluster, x.Message)
			}
		}
	})
	t.Run("cluster ID clash", func(t *testing.T) {
		ns := seedService(t, "e2e-diag-clash")
		clusterProperty(t, "member2", diagnose.PropertyClusterID, "member1")
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		wantFailure(t, rep, diagnose.CheckClusterID, "member2", `its ClusterProperty cluster.clusterset.k8s.io says "member1", not "member2"`, "Give each cluster its own ID")
		wantFailure(t, rep, diagnose.CheckClusterID, "member1", `ID "member1" is also claimed by "member2"`, "Give each cluster its own ID")
	})
	// A ClusterProperty ID other than the context name is the member's ID, as in every other
	// command: sync labels the imports with it, and diagnose checks them under it.
	t.Run("cluster ID from a ClusterProperty", func(t *testing.T) {
		clusterProperty(t, "member1", diagnose.PropertyClusterID, "east")
		ns := seedService(t, "e2e-diag-propid")
		rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers)
		if rep.Summary.Failed != 0 {
			t.Errorf("member1 named east by its ClusterProperty:\n%s", failures(rep))
		}
		found := false
		for _, x := range rep.Results {
			if x.Check == diagnose.CheckClusterID && x.Cluster == "east" {
				found = x.Severity == diagnose.OK && strings.Contains(x.Message, "as its ClusterProperty says")
			}
		}
		if !found {
			t.Errorf("no passed cluster-id result for east:\n%+v", rep.Results)
		}
	})
}

// clusterPropertyCRD is KEP-2149's ClusterProperty (about.k8s.io), as much of it as the test needs.
const clusterPropertyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterproperties.about.k8s.io
  annotations: {api-approved.kubernetes.io: "unapproved, a stand-in for the e2e tests of kubectl-mcs"}
spec:
  group: about.k8s.io
  scope: Cluster
  names: {plural: clusterproperties, singular: clusterproperty, kind: ClusterProperty, listKind: ClusterPropertyList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [value]
            properties:
              value: {type: string, maxLength: 128000, minLength: 1}
`

// clusterProperty creates a ClusterProperty in c (with its CRD, removed afterwards).
func clusterProperty(t *testing.T, c, name, value string) {
	t.Helper()
	crd := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(crd, []byte(clusterPropertyCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runKubectl(c, "apply", "-f", crd); err != nil {
		t.Fatalf("%s: %v: %s", c, err, out)
	}
	t.Cleanup(func() { _, _ = runKubectl(c, "delete", "-f", crd, "--wait") })
	if out, err := runKubectl(c, "wait", "--for=condition=Established", "--timeout=60s", "crd/clusterproperties.about.k8s.io"); err != nil {
		t.Fatalf("%s: %v: %s", c, err, out)
	}
	gvr := schema.GroupVersionResource{Group: "about.k8s.io", Version: "v1alpha1", Resource: "clusterproperties"}
	p := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"value": value}}}
	waitFor(t, "the ClusterProperty to be created", func() bool {
		_, err := clients[c].dyn.Resource(gvr).Create(context.Background(), p, metav1.CreateOptions{})
		return err == nil
	})
}

// restrictedKubeconfig is a kubeconfig whose users are a ServiceAccount of ns in every member,
// bound to what sync needs (pkg/diagnose's SyncAccess) plus what diagnose reads, except delete on
// EndpointSlices in cluster without: a token from the TokenRequest API for each.
func restrictedKubeconfig(t *testing.T, ns, without string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	name := "diag-" + ns
	for _, c := range members {
		rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
			{APIGroups: []string{"about.k8s.io"}, Resources: []string{"clusterproperties"}, Verbs: []string{"list"}}}
		for _, a := range diagnose.SyncAccess {
			r := a.Resource
			if a.Subresource != "" {
				r += "/" + a.Subresource
			}
			var verbs []string
			for _, v := range a.Verbs {
				if !(c == without && a.Resource == "endpointslices" && v == "delete") {
					verbs = append(verbs, v)
				}
			}
			rule := rbacv1.PolicyRule{APIGroups: []string{a.Group}, Resources: []string{r}, Verbs: verbs}
			if a.Name != "" {
				rule.ResourceNames = []string{a.Name}
			}
			rules = append(rules, rule)
		}
		kube := clients[c].kube
		bg := context.Background()
		if _, err := kube.CoreV1().ServiceAccounts(ns).Create(bg, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "diag"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if _, err := kube.RbacV1().ClusterRoles().Create(bg, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(bg, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "diag", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoleBindings().Delete(bg, name, metav1.DeleteOptions{})
			_ = kube.RbacV1().ClusterRoles().Delete(bg, name, metav1.DeleteOptions{})
		})
		tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(bg, "diag", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: token: %v", c, err)
		}
		user := c + "-diag"
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
		cfg.Contexts[c].AuthInfo = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDiagnoseKarmada: with --karmada-context, the control plane's objects as status --karmada
// judges them, and what Karmada should have placed in the members. The stand-in control plane
// runs no Karmada controller: the MultiClusterService is never reported on, and nothing arrives.
func TestDiagnoseKarmada(t *testing.T) {
	needKarmada(t)
	ns := namespace(t, "e2e-diag-karmada", karmadaCtx, "member2")
	service(t, karmadaCtx, ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers", "member1", "--consumers", "member2")
	mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers", "member1", "--consumers", "member2")
	rep, _ := diagnoseJSON(t, "", ns, "serve", "-n", ns, "--contexts", allMembers, "--karmada-context", karmadaCtx)
	var warned, exportOK bool
	for _, x := range rep.Results {
		if x.Check == diagnose.CheckKarmada && x.Object == "multiclusterservice/"+ns+"/serve" && x.Severity == diagnose.Warn && strings.Contains(x.Message, "no Karmada controller has reported") {
			warned = true
		}
		if x.Check == diagnose.CheckKarmada && x.Object == "serviceexport/"+ns+"/serve" && x.Severity == diagnose.OK && x.Message == `placed in "member1"` {
			exportOK = true
		}
	}
	if !warned || !exportOK {
		t.Errorf("control plane checks:\n%s", failures(rep))
	}
	wantFailure(t, rep, diagnose.CheckKarmadaPlaced, "member2", "the derived Service derived-serve does not exist", `the Work for "member2"`)
	wantFailure(t, rep, diagnose.CheckKarmadaPlaced, "member2", "a consumer of MultiClusterService "+ns+"/serve without the Service", "ServiceApplied")
}
