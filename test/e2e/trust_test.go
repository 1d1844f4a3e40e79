//go:build e2e

package e2e

// Issue "sync you can trust": one test per finding, each failing on the engine that took what it
// happened to see for what the clusterset holds.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// importClusters is the import's status.clusters in cluster c (nil when there is no import).
func importClusters(t *testing.T, c, version, ns, name string) []string {
	t.Helper()
	si := get(t, c, siGVR(version), ns, name)
	if si == nil {
		return nil
	}
	l, _, _ := unstructured.NestedSlice(si.Object, "status", "clusters")
	out := []string{}
	for _, x := range l {
		out = append(out, x.(map[string]any)["cluster"].(string))
	}
	sort.Strings(out)
	return out
}

func deleteExport(t *testing.T, c, version, ns, name string) {
	t.Helper()
	if err := clients[c].dyn.Resource(seGVR(version)).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("%s: deleting ServiceExport %s/%s: %v", c, ns, name, err)
	}
}

// importGone: no import, derived Service or slice of name is left in cluster c.
func importGone(t *testing.T, c, ns, name string) bool {
	return get(t, c, siGVR("v1beta1"), ns, name) == nil && derivedService(t, c, ns, name) == nil &&
		len(importedIPs(t, c, ns, name, "")) == 0
}

// 1. A member down when sync --watch starts keeps what it exported everywhere, cleanup of the
// others goes on meanwhile, and it joins once it is back.
func TestTrustMemberDownAtStart(t *testing.T) {
	ns := namespace(t, "e2e-down", members...)
	deployment(t, "member1", ns, "web", 1)
	service(t, "member1", ns, "web")
	userExport(t, "member1", ns, "web")
	deployment(t, "member2", ns, "api", 1)
	service(t, "member2", ns, "api")
	userExport(t, "member2", ns, "api")
	// Its pods now: after the outage the node is tainted unreachable for a while.
	deployment(t, "member2", ns, "late", 1)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	apiIPs := podIPs(t, "member2", ns, "api")
	for _, c := range []string{"member1", "member3"} {
		if got := importedIPs(t, c, ns, "api", "member2"); !reflect.DeepEqual(got, apiIPs) {
			t.Fatalf("%s: api from member2 %v, want %v", c, got, apiIPs)
		}
	}

	testbed(t, "stop", "member2")
	up := false
	t.Cleanup(func() {
		if !up {
			testbed(t, "start", "member2")
		}
	})
	startWatch(t, ns)
	// Unexport in member1 while member2 has never been read: cleaned up in every readable member.
	deleteExport(t, "member1", "v1beta1", ns, "web")
	for _, c := range []string{"member1", "member3"} {
		waitFor(t, c+": web's import cleaned up while member2 is down", func() bool { return importGone(t, c, ns, "web") })
	}
	// member2 not read is not member2 not exporting.
	for _, c := range []string{"member1", "member3"} {
		if got := importedIPs(t, c, ns, "api", "member2"); !reflect.DeepEqual(got, apiIPs) {
			t.Errorf("%s: member2's endpoints of api while it is down: %v, want %v", c, got, apiIPs)
		}
		if got := importClusters(t, c, "v1beta1", ns, "api"); !reflect.DeepEqual(got, []string{"member2"}) {
			t.Errorf("%s: api import's clusters while member2 is down: %v", c, got)
		}
	}

	testbed(t, "start", "member2")
	up = true
	back := time.Now()
	waitFor(t, "member2 joins: web's stale import there removed", func() bool { return importGone(t, "member2", ns, "web") })
	if d := time.Since(back); d > 30*time.Second {
		t.Errorf("member2 joined %v after it came back, want within 30s", d)
	}
	// A new export in the member that joined late is imported everywhere.
	service(t, "member2", ns, "late")
	userExport(t, "member2", ns, "late")
	want := sourceIPsAll(t, "member2", ns, "late")
	for _, c := range members {
		waitFor(t, c+": late export of member2 imported", func() bool {
			return reflect.DeepEqual(importedIPs(t, c, ns, "late", "member2"), want)
		})
	}
}

// sourceIPsAll is every address of a Service's own slices, sorted, once there are any.
func sourceIPsAll(t *testing.T, c, ns, svc string) []string {
	t.Helper()
	var ips []string
	waitFor(t, c+": slices of "+svc, func() bool { ips = sourceIPs(t, c, ns, svc, true); return len(ips) > 0 })
	sort.Strings(ips)
	return ips
}

// 2. Exporting a Service named derived-X (here X's own derived Service) never deletes X's
// derived Service or slices: their UIDs and cluster IP survive resyncs.
func TestTrustDerivedNameExport(t *testing.T) {
	ns := namespace(t, "e2e-derived", members...)
	deployment(t, "member1", ns, "web", 1)
	service(t, "member1", ns, "web")
	userExport(t, "member1", ns, "web")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	before := map[string]string{}
	for _, c := range members {
		s := derivedService(t, c, ns, "web")
		if s == nil {
			t.Fatalf("%s: no derived-web", c)
		}
		before[c] = string(s.UID) + "/" + s.Spec.ClusterIP + "/" + strings.Join(managedSliceUIDs(t, c, ns), ",")
	}
	userExport(t, "member1", ns, "derived-web")
	w := startWatch(t, ns)
	time.Sleep(3 * time.Second)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	w.kill()
	for _, c := range members {
		s := derivedService(t, c, ns, "web")
		if s == nil {
			t.Fatalf("%s: derived-web deleted after derived-web was exported", c)
		}
		if got := string(s.UID) + "/" + s.Spec.ClusterIP + "/" + strings.Join(managedSliceUIDs(t, c, ns), ","); got != before[c] {
			t.Errorf("%s: derived-web or its slices replaced: %s -> %s", c, before[c], got)
		}
	}
	if got := conditions(t, "member1", ns, "derived-web")["Valid"]; got != "False/NoService" {
		t.Errorf("export of our own derived Service: Valid %q, want False/NoService", got)
	}
}

type syncReport struct {
	Changes []struct{ Cluster, Kind, Object, Action string } `json:"changes"`
	Skipped []string                                         `json:"skipped"`
}

// 3. A cluster left out of --contexts is not "not exporting": a sync over a subset deletes none
// of its endpoints and reports them as left alone.
func TestTrustContextsSubset(t *testing.T) {
	ns := namespace(t, "e2e-subset", members...)
	for _, c := range []string{"member1", "member2"} {
		deployment(t, c, ns, "serve", 1)
		service(t, c, ns, "serve")
		userExport(t, c, ns, "serve")
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	want := podIPs(t, "member2", ns, "serve")
	if got := importedIPs(t, "member3", ns, "serve", "member2"); !reflect.DeepEqual(got, want) {
		t.Fatalf("member3: member2's endpoints %v, want %v", got, want)
	}
	for _, subset := range []string{"member1", "member1,member3"} {
		r := mustMCS(t, "sync", "-n", ns, "--contexts", subset, "--dry-run=client", "-o", "json")
		var rep syncReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("sync -o json: %v\n%s", err, r.stdout)
		}
		for _, ch := range rep.Changes {
			if ch.Action == "delete" || ch.Kind == "ServiceImport" {
				t.Errorf("--contexts=%s plans %+v", subset, ch)
			}
		}
		if !strings.Contains(strings.Join(rep.Skipped, "\n"), `source cluster "member2" is not in the clusterset`) {
			t.Errorf("--contexts=%s: member2's slices not reported as left alone: %q", subset, rep.Skipped)
		}
		mustMCS(t, "sync", "-n", ns, "--contexts", subset)
	}
	for _, c := range []string{"member1", "member3"} {
		if got := importedIPs(t, c, ns, "serve", "member2"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: member2's endpoints after a subset sync: %v, want %v", c, got, want)
		}
		if got := importClusters(t, c, "v1beta1", ns, "serve"); !reflect.DeepEqual(got, []string{"member1", "member2"}) {
			t.Errorf("%s: import clusters after a subset sync: %v", c, got)
		}
	}
}

// portsScenario: serve exported from member1 (http 80, the oldest export) and member2 (m2Ports),
// each with one pod, member2's source slice listing every port; then one sync. It returns the
// namespace and the sync's output.
func portsScenario(t *testing.T, prefix string, m2Ports []corev1.ServicePort) (string, string) {
	t.Helper()
	ns := namespace(t, prefix, members...)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}
	})
	userExport(t, "member1", ns, "serve")
	time.Sleep(1100 * time.Millisecond) // member1's export is the oldest, to the second
	deployment(t, "member2", ns, "serve", 1)
	service(t, "member2", ns, "serve", func(s *corev1.Service) { s.Spec.Ports = m2Ports })
	userExport(t, "member2", ns, "serve")
	waitFor(t, "member2's source slice has every port", func() bool {
		l, _ := clients["member2"].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=serve"})
		return len(l.Items) == 1 && len(l.Items[0].Ports) == len(m2Ports) && len(l.Items[0].Endpoints) == 1
	})
	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	// namespace, service, conflict, winner, disagreeing, detail
	if f := row(t, r.stdout, ns, "serve"); f[2] != "PortConflict" || f[3] != "member1" || f[4] != "member2" {
		t.Errorf("no PortConflict row (winner member1, member2 disagreeing):\n%s", r.stdout)
	}
	for _, c := range []string{"member1", "member2"} {
		if got := conditions(t, c, ns, "serve")["Conflict"]; got != "True/PortConflict" {
			t.Errorf("%s: Conflict %q, want True/PortConflict", c, got)
		}
	}
	return ns, r.stdout
}

// 4 and 10. Ports that differ without colliding raise PortConflict, and a cluster's endpoints are
// served only for the import ports its own Service exports the same way.
func TestTrustPortsDifferAndServedPorts(t *testing.T) {
	ns, _ := portsScenario(t, "e2e-ports", []corev1.ServicePort{
		{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}, // same name, another port
		{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090)},
	})
	si := get(t, "member3", siGVR("v1beta1"), ns, "serve")
	ports, _, _ := unstructured.NestedSlice(si.Object, "spec", "ports")
	var got []string
	for _, p := range ports {
		m := p.(map[string]any)
		got = append(got, m["name"].(string)+":"+itoa(int(m["port"].(int64))))
	}
	if !reflect.DeepEqual(got, []string{"http:80", "metrics:9090"}) {
		t.Errorf("import ports %v, want the union http:80 (oldest), metrics:9090", got)
	}
	// member2 exports http on 8080, not as the import's http:80: its endpoints serve metrics only.
	want := map[string][]string{"member1": {"http"}, "member2": {"metrics"}}
	for _, c := range members {
		if got := slicePortsBySource(t, c, ns, "serve"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: slice ports by source %v, want %v", c, got, want)
		}
	}
}

// 9. A terminating namespace imports nothing: no failed creates, and Ready does not wait for it.
func TestTrustTerminatingNamespace(t *testing.T) {
	ns := namespace(t, "e2e-term", members...)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hold", Namespace: ns, Finalizers: []string{"e2e.kubectl-mcs/hold"}}}
	if _, err := clients["member3"].kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = clients["member3"].kube.CoreV1().ConfigMaps(ns).Patch(ctx, "hold", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := clients["member3"].kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "member3's namespace terminating", func() bool {
		n, err := clients["member3"].kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err == nil && n.Status.Phase == corev1.NamespaceTerminating
	})
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	userExport(t, "member1", ns, "serve")
	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if strings.Contains(r.stdout, "member3") {
		t.Errorf("writes planned in member3's terminating namespace:\n%s", r.stdout)
	}
	if got := conditions(t, "member1", ns, "serve")["Ready"]; got != "True/Exported" {
		t.Errorf("Ready %q, want True/Exported", got)
	}
}

// 5. A member serving the mcs-api v0.1.0-era CRDs (what Karmada installs) gets imports holding
// only what its schema declares, and the next pass writes nothing; it can export too.
func TestTrustLegacyCRDMember(t *testing.T) {
	const legacy = "legacy1"
	testbed(t, "up", legacy)
	t.Cleanup(func() { testbed(t, "down", legacy) })
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: legacy}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	lc := &cluster{kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
	clients[legacy] = lc
	t.Cleanup(func() { delete(clients, legacy) })
	crds, _ := filepath.Glob("../../pkg/crdschema/testdata/v0.1.0-*.yaml")
	args := []string{"apply", "--server-side"}
	for _, f := range crds {
		args = append(args, "-f", f)
	}
	if out, err := runKubectl(legacy, args...); err != nil || len(crds) != 2 {
		t.Fatalf("installing the v0.1.0 CRDs (%v): %v: %s", crds, err, out)
	}
	if out, err := runKubectl(legacy, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/serviceexports.multicluster.x-k8s.io", "crd/serviceimports.multicluster.x-k8s.io"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ns := namespace(t, "e2e-legacy", "member1", legacy)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve", func(s *corev1.Service) {
		itp := corev1.ServiceInternalTrafficPolicyLocal
		s.Spec.InternalTrafficPolicy = &itp
	})
	userExport(t, "member1", ns, "serve")
	// The old ServiceExport has no spec at all.
	deployment(t, legacy, ns, "old", 1)
	service(t, legacy, ns, "old")
	se := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": "old", "namespace": ns}}}
	if _, err := lc.dyn.Resource(seGVR("v1alpha1")).Namespace(ns).Create(context.Background(), se, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	both := "member1," + legacy
	mustMCS(t, "sync", "-n", ns, "--contexts", both)
	si := get(t, legacy, siGVR("v1alpha1"), ns, "serve")
	if si == nil {
		t.Fatal("no ServiceImport in the v0.1.0 member")
	}
	spec, _, _ := unstructured.NestedMap(si.Object, "spec")
	for _, f := range []string{"ipFamilies", "internalTrafficPolicy", "trafficDistribution"} {
		if _, ok := spec[f]; ok {
			t.Errorf("v0.1.0 import holds %s, which its schema does not declare", f)
		}
	}
	if ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips"); len(ips) != 1 {
		t.Errorf("v0.1.0 import ips %v, want the derived Service's one IP", ips)
	}
	if got := importedIPs(t, legacy, ns, "serve", "member1"); !reflect.DeepEqual(got, podIPs(t, "member1", ns, "serve")) {
		t.Errorf("endpoints in the v0.1.0 member %v", got)
	}
	if got := importedIPs(t, "member1", ns, "old", legacy); !reflect.DeepEqual(got, podIPs(t, legacy, ns, "old")) {
		t.Errorf("the v0.1.0 member's export in member1: %v", got)
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", both); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("second pass over a v0.1.0 member wrote:\n%s", r.stdout)
	}
}

// 4. A port only one exporter has (no name or number collides) is served from the union and
// still raises PortConflict: any difference does (SPEC 4, KEP).
func TestTrustPortsDifferWithoutCollision(t *testing.T) {
	ns, _ := portsScenario(t, "e2e-ports2", []corev1.ServicePort{
		{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090)},
	})
	// member2 exports http exactly as member1 does: its endpoints serve both ports.
	if got, want := slicePortsBySource(t, "member3", ns, "serve"), map[string][]string{"member1": {"http"}, "member2": {"http", "metrics"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("member3: slice ports by source %v, want %v", got, want)
	}
}
