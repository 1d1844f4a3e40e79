//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSyncSeedScenario is step 3 of Karmada's multi-cluster service discovery guide without a
// control plane: serve runs in member1, and member2 reaches it as derived-serve.
func TestSyncSeedScenario(t *testing.T) {
	ns := namespace(t, "e2e-seed", members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if !strings.Contains(r.stdout, "No conflicts.") {
		t.Errorf("sync output lacks the conflicts table:\n%s", r.stdout)
	}
	want := podIPs(t, "member1", ns, "serve")
	for _, c := range members {
		si := get(t, c, siGVR("v1beta1"), ns, "serve")
		if si == nil {
			t.Fatalf("%s: no ServiceImport\n%s", c, r.stdout)
		}
		derived, err := clients[c].kube.CoreV1().Services(ns).Get(context.Background(), "derived-serve", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: no derived-serve: %v", c, err)
		}
		if len(derived.Spec.Selector) != 0 || derived.Spec.Ports[0].Port != 80 || derived.Spec.ClusterIP == "" || derived.Spec.ClusterIP == "None" {
			t.Errorf("%s: derived-serve is not a selectorless ClusterIP service on port 80: %+v", c, derived.Spec)
		}
		ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		if !slices.Equal(ips, []string{derived.Spec.ClusterIP}) {
			t.Errorf("%s: ServiceImport ips %v, want the derived service's %s", c, ips, derived.Spec.ClusterIP)
		}
		if typ, _, _ := unstructured.NestedString(si.Object, "spec", "type"); typ != "ClusterSetIP" {
			t.Errorf("%s: type %q", c, typ)
		}
		if cl, _, _ := unstructured.NestedSlice(si.Object, "status", "clusters"); len(cl) != 1 || cl[0].(map[string]any)["cluster"] != "member1" {
			t.Errorf("%s: status.clusters = %v", c, cl)
		}
		if si.GetAnnotations()["multicluster.kubernetes.io/derived-service"] != "derived-serve" {
			t.Errorf("%s: derived-service annotation missing: %v", c, si.GetAnnotations())
		}
		if got := importedIPs(t, c, ns, "serve", "member1"); !slices.Equal(got, want) {
			t.Errorf("%s: imported endpoints %v, want member1's pod IPs %v", c, got, want)
		}
		l, _ := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=derived-serve"})
		for _, s := range l.Items {
			if s.Labels[discoveryv1.LabelManagedBy] != "kubectl-mcs" {
				t.Errorf("%s: slice %s managed-by %q", c, s.Name, s.Labels[discoveryv1.LabelManagedBy])
			}
		}
	}
	if got := conditions(t, "member1", ns, "serve"); got["Valid"] != "True/Valid" || got["Ready"] != "True/Exported" || got["Conflict"] != "False/NoConflicts" {
		t.Errorf("export conditions = %v", got)
	}

	// Steady state: nothing to write.
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("second sync wrote:\n%s", r.stdout)
	}

	// Scaling: the slices follow.
	if out, err := runKubectl("member1", "-n", ns, "scale", "deployment/serve", "--replicas=3"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	waitFor(t, "3 endpoints in member1", func() bool {
		return len(podIPs(t, "member1", ns, "serve")) == 3 && len(sourceIPs(t, "member1", ns, "serve")) == 3
	})
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if got, want := importedIPs(t, "member2", ns, "serve", "member1"), podIPs(t, "member1", ns, "serve"); !slices.Equal(got, want) {
		t.Errorf("after scale-up member2 has %v, want %v", got, want)
	}

	if out, err := runKubectl("member1", "-n", ns, "scale", "deployment/serve", "--replicas=1"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	waitFor(t, "1 endpoint in member1, the terminating ones gone", func() bool {
		return len(podIPs(t, "member1", ns, "serve")) == 1 &&
			len(sourceIPs(t, "member1", ns, "serve")) == 1 && len(sourceIPs(t, "member1", ns, "serve", true)) == 1
	})
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		if got, want := importedIPs(t, c, ns, "serve", "member1"), podIPs(t, "member1", ns, "serve"); !slices.Equal(got, want) {
			t.Errorf("after scale-down %s has %v, want %v", c, got, want)
		}
	}

	// Unexport: everything goes from every cluster.
	mustMCS(t, "unexpose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		if get(t, c, siGVR("v1beta1"), ns, "serve") != nil {
			t.Errorf("%s: ServiceImport left after unexport", c)
		}
		if _, err := clients[c].kube.CoreV1().Services(ns).Get(context.Background(), "derived-serve", metav1.GetOptions{}); err == nil {
			t.Errorf("%s: derived-serve left after unexport", c)
		}
		if ips := importedIPs(t, c, ns, "serve", ""); len(ips) != 0 {
			t.Errorf("%s: imported endpoints left after unexport: %v", c, ips)
		}
	}
	if _, err := clients["member1"].kube.CoreV1().Services(ns).Get(context.Background(), "serve", metav1.GetOptions{}); err != nil {
		t.Errorf("the user's Service was touched: %v", err)
	}
}

// TestSyncTwoExportersAndTypeConflict: endpoints from both exporters everywhere; the oldest export
// decides the type, and every export says so.
func TestSyncTwoExportersAndTypeConflict(t *testing.T) {
	ns := typeConflict(t, "e2e-conflict")

	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	// The detail is wrapped under its row: read as prose.
	if prose := strings.Join(strings.Fields(r.stdout), " "); !strings.Contains(prose, "TypeConflict") || !strings.Contains(prose, `Using "Headless" from oldest service export in "member2"`) {
		t.Errorf("conflicts table does not name the winner:\n%s", r.stdout)
	}
	for _, c := range []string{"member1", "member2"} {
		if got := conditions(t, c, ns, "web"); got["Conflict"] != "True/TypeConflict" {
			t.Errorf("%s: Conflict condition %q", c, got["Conflict"])
		}
	}
	si := get(t, "member3", siGVR("v1beta1"), ns, "web")
	if typ, _, _ := unstructured.NestedString(si.Object, "spec", "type"); typ != "Headless" {
		t.Errorf("import type %q, want the oldest export's Headless", typ)
	}
	if ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips"); len(ips) != 0 {
		t.Errorf("a headless import has IPs %v", ips)
	}
	for _, src := range []string{"member1", "member2"} {
		if got, want := importedIPs(t, "member3", ns, "web", src), podIPs(t, src, ns, "web"); !slices.Equal(got, want) {
			t.Errorf("member3 has %v from %s, want %v", got, src, want)
		}
	}
	evs, err := clients["member1"].kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=ConflictDetected"})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no ConflictDetected event on member1's export: %v", err)
	}
	var rep struct {
		Conflicts []struct{ Reason, Winner string } `json:"conflicts"`
	}
	r = mustMCS(t, "sync", "-n", ns, "--contexts", allMembers, "--dry-run=client", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Conflicts) != 1 || rep.Conflicts[0].Winner != "member2" {
		t.Errorf("json report: %v %+v\n%s", err, rep, r.stdout)
	}

	// One cluster stops exporting: only its endpoints go.
	if err := clients["member1"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if got := importedIPs(t, "member3", ns, "web", "member1"); len(got) != 0 {
		t.Errorf("member1 stopped exporting but member3 still has its endpoints %v", got)
	}
	if got := importedIPs(t, "member3", ns, "web", "member2"); len(got) == 0 {
		t.Error("member2's endpoints went too")
	}
	if got := conditions(t, "member2", ns, "web"); got["Conflict"] != "False/NoConflicts" {
		t.Errorf("conflict not cleared: %v", got)
	}
}

// TestSyncInvalidAndForeign: ExternalName exports are reported invalid and imported nowhere; a
// user-made ServiceImport is left exactly as it was.
func TestSyncInvalidAndForeign(t *testing.T) {
	ns := namespace(t, "e2e-foreign", members...)
	service(t, "member1", ns, "ext", func(s *corev1.Service) {
		s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.org"}
	})
	userExport(t, "member1", ns, "ext")
	userExport(t, "member1", ns, "gone") // no Service at all
	service(t, "member1", ns, "api")
	userExport(t, "member1", ns, "api")
	mine := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "api", "namespace": ns},
		"spec":     map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(9999), "protocol": "TCP"}}},
	}}
	created, err := clients["member3"].dyn.Resource(siGVR("v1beta1")).Namespace(ns).Create(context.Background(), mine, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if got := conditions(t, "member1", ns, "ext"); got["Valid"] != "False/InvalidServiceType" {
		t.Errorf("ExternalName export conditions %v", got)
	}
	if got := conditions(t, "member1", ns, "gone"); got["Valid"] != "False/NoService" {
		t.Errorf("export without Service: conditions %v", got)
	}
	for _, c := range members {
		if get(t, c, siGVR("v1beta1"), ns, "ext") != nil || get(t, c, siGVR("v1beta1"), ns, "gone") != nil {
			t.Errorf("%s: an invalid export was imported", c)
		}
	}
	after := get(t, "member3", siGVR("v1beta1"), ns, "api")
	if after.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("the user's ServiceImport was modified (resourceVersion %s -> %s)", created.GetResourceVersion(), after.GetResourceVersion())
	}
	if !strings.Contains(r.stderr, `cluster "member3"`) {
		t.Errorf("the skipped user import is not reported; stderr:\n%s", r.stderr)
	}
	if get(t, "member2", siGVR("v1beta1"), ns, "api") == nil {
		t.Error("member2 should still import api")
	}
}

// TestSyncWatch: with --watch, an export shows up as an import with a cluster IP everywhere, and
// goes with unexport, without re-running anything.
func TestSyncWatch(t *testing.T) {
	ns := namespace(t, "e2e-watch", members...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig", kubeconfig, "sync", "--watch", "-n", ns, "--contexts", allMembers, "--health-probe-bind-address", "127.0.0.1:0")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	time.Sleep(time.Second)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	start := time.Now()
	userExport(t, "member1", ns, "serve")
	for _, c := range members {
		waitFor(t, c+": ServiceImport with an IP", func() bool {
			si := get(t, c, siGVR("v1beta1"), ns, "serve")
			if si == nil {
				return false
			}
			ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
			return len(ips) == 1 && len(importedIPs(t, c, ns, "serve", "member1")) == 1
		})
	}
	t.Logf("export to import with IP and endpoints in all 3 clusters: %v", time.Since(start))
	if err := clients["member1"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Delete(context.Background(), "serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range members {
		waitFor(t, c+": import gone", func() bool { return get(t, c, siGVR("v1beta1"), ns, "serve") == nil })
	}
	if !strings.Contains(out.String(), "No conflicts.") {
		t.Errorf("watch output lacks the conflicts table:\n%s", out.String())
	}
}

// typeConflict exports web from member2 (headless) and then from member1 (ClusterSetIP), each
// with one pod, in a fresh namespace: member2's export is the oldest and decides the type.
func typeConflict(t *testing.T, prefix string) string {
	t.Helper()
	ns := namespace(t, prefix, members...)
	deployment(t, "member1", ns, "web", 1)
	deployment(t, "member2", ns, "web", 1)
	service(t, "member2", ns, "web", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	service(t, "member1", ns, "web")
	userExport(t, "member2", ns, "web")
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	userExport(t, "member1", ns, "web")
	return ns
}
