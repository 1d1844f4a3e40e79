//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// statusJSON runs `status -o json` and decodes the documented schema.
func statusJSON(t *testing.T, args ...string) (*status.MultiClusterServiceStatusList, result) {
	t.Helper()
	r := mustMCS(t, append([]string{"status", "-o", "json"}, args...)...)
	var l status.MultiClusterServiceStatusList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.stdout)
	}
	if l.APIVersion != "mcs.kubectl.io/v1alpha1" || l.Kind != "MultiClusterServiceStatusList" {
		t.Errorf("apiVersion %q kind %q", l.APIVersion, l.Kind)
	}
	return &l, r
}

func item(t *testing.T, l *status.MultiClusterServiceStatusList, name string) status.MultiClusterServiceStatus {
	t.Helper()
	for _, it := range l.Items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("no item %q in %+v", name, l.Items)
	return status.MultiClusterServiceStatus{}
}

// TestStatusHealthy: the seed scenario is one healthy row, in JSON, in the table, wide, and
// described.
func TestStatusHealthy(t *testing.T) {
	ns := seedService(t, "e2e-status")
	l, r := statusJSON(t, "-n", ns, "--contexts", allMembers)
	if r.stderr != "" {
		t.Errorf("warnings with every cluster up: %s", r.stderr)
	}
	it := item(t, l, "serve")
	if it.Health != status.Healthy || len(it.Problems) != 0 || it.Type != "ClusterSetIP" {
		t.Errorf("health %s %v type %s", it.Health, it.Problems, it.Type)
	}
	if !slices.Equal(it.ExportingClusters, []string{"member1"}) || !slices.Equal(it.ImportingClusters, members) {
		t.Errorf("exporting %v importing %v", it.ExportingClusters, it.ImportingClusters)
	}
	if len(it.Endpoints) != 1 || it.Endpoints[0] != (status.SourceEndpoints{Cluster: "member1", Ready: 2, Total: 2}) {
		t.Errorf("endpoints %+v", it.Endpoints)
	}
	if len(it.Ports) != 1 || it.Ports[0].Port != 80 || len(it.Conflicts) != 0 {
		t.Errorf("ports %+v conflicts %+v", it.Ports, it.Conflicts)
	}
	for i, c := range it.Clusters {
		si := get(t, members[i], siGVR("v1beta1"), ns, "serve")
		ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		if c.Cluster != members[i] || c.ImportState != status.ImportReady || c.Import == nil || !slices.Equal(c.Import.IPs, ips) ||
			c.Import.DerivedService != "derived-serve" || !c.Import.Managed || len(c.ImportedEndpoints) != 1 || c.ImportedEndpoints[0].Ready != 2 {
			t.Errorf("%s: breakdown %+v import %+v", members[i], c, c.Import)
		}
	}
	if e := it.Clusters[0].Export; e == nil || !e.Valid || len(e.Conditions) != 3 {
		t.Errorf("member1's export %+v", e)
	}

	// Counts by default, within 80 columns; every row starts with its namespace (no marker field).
	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers)
	f := row(t, r.stdout, ns, "serve")
	if f[0] != ns || cell(t, r.stdout, f, "STATUS") != "Healthy" || cell(t, r.stdout, f, "READY") != "2/2" ||
		cell(t, r.stdout, f, "EXPORTED") != "1/3" {
		t.Errorf("table:\n%s", r.stdout)
	}
	if w := mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "wide"); cell(t, w.stdout, row(t, w.stdout, ns, "serve"), "IMPORTED") != "3/3" {
		t.Errorf("-o wide:\n%s", w.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		// The test's namespace is longer than a user's (NAMESPACE's 9 columns): not counted.
		if n := len(l) - (len(ns) - len("NAMESPACE")); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Error("colour on a pipe")
	}
	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "wide")
	f = row(t, r.stdout, ns, "serve")
	if cell(t, r.stdout, f, "ENDPOINTS-FROM") != "member1=2/2" || cell(t, r.stdout, f, "IMPORTED-IN") != allMembers || cell(t, r.stdout, f, "EXPORTED-FROM") != "member1" ||
		cell(t, r.stdout, f, "CONFLICTS") != "<none>" || cell(t, r.stdout, f, "TYPE") != "ClusterSetIP" {
		t.Errorf("wide table:\n%s", r.stdout)
	}

	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "wide", "--no-headers")
	if strings.Contains(r.stdout, "NAMESPACE") || !strings.Contains(r.stdout, "derived-serve") ||
		!strings.Contains(r.stdout, "member1="+it.Clusters[0].Import.IPs[0]) || !strings.Contains(r.stdout, "member3=Ready") {
		t.Errorf("wide without headers:\n%s", r.stdout)
	}
	if f := strings.Fields(r.stdout); len(f) < 2 || f[0] != ns || f[1] != "serve" {
		t.Errorf("--no-headers: the namespace and the name come first: %q", r.stdout)
	}
	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "name")
	if r.stdout != "serviceimport.multicluster.x-k8s.io/serve\n" {
		t.Errorf("-o name: %q", r.stdout)
	}

	r = mustMCS(t, "status", "serve", "-n", ns, "--contexts", allMembers)
	for _, want := range []string{"Status:         Healthy", "Export conditions:", "ServiceImport present in every reachable importing cluster.", "  member2:\n    State:                Reachable\n    Export:               <none>\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}

	r = mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "jsonpath={.items[*].endpoints[0].ready}")
	if r.stdout != "2" {
		t.Errorf("jsonpath: %q", r.stdout)
	}
	if r := mcs("status", "nope", "-n", ns, "--contexts", allMembers); r.code != 1 || !strings.Contains(r.stderr, ns+"/nope") {
		t.Errorf("unknown service: exit %d, stderr %q", r.code, r.stderr)
	}
	empty := namespace(t, "e2e-status-empty", members...)
	if r := mustMCS(t, "status", "-n", empty, "--contexts", allMembers); r.stdout != "" || !strings.Contains(r.stderr, "No multi-cluster services found in "+empty+" namespace.") {
		t.Errorf("empty namespace: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

// TestStatusConflict: the oldest export wins and the row says so, as sync decided.
func TestStatusConflict(t *testing.T) {
	ns := namespace(t, "e2e-status-conflict", members...)
	service(t, "member2", ns, "web", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	service(t, "member1", ns, "web")
	userExport(t, "member2", ns, "web")
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	userExport(t, "member1", ns, "web")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)

	l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
	it := item(t, l, "web")
	if it.Health != status.Conflict || it.Type != "Headless" || len(it.Conflicts) != 1 {
		t.Fatalf("health %s type %s conflicts %+v", it.Health, it.Type, it.Conflicts)
	}
	c := it.Conflicts[0]
	if c.Reason != "TypeConflict" || c.Winner != "member2" || !slices.Equal(c.Disagreeing, []string{"member1"}) ||
		!strings.Contains(c.Message, `Using "Headless" from oldest service export in "member2"`) {
		t.Errorf("conflict %+v", c)
	}
	if !slices.Equal(it.ExportingClusters, []string{"member1", "member2"}) {
		t.Errorf("exporting %v", it.ExportingClusters)
	}

	r := mustMCS(t, "status", "-A", "--contexts", allMembers)
	f := row(t, r.stdout, ns, "web")
	if f[0] != ns || cell(t, r.stdout, f, "STATUS") != "Conflict" || cell(t, r.stdout, f, "EXPORTED") != "2/3" {
		t.Errorf("conflict row %v in\n%s", f, r.stdout)
	}
	r = mustMCS(t, "status", "-A", "--contexts", allMembers, "-o", "wide")
	if f := row(t, r.stdout, ns, "web"); cell(t, r.stdout, f, "CONFLICTS") != "TypeConflict(winner=member2)" {
		t.Errorf("wide conflict row %v in\n%s", f, r.stdout)
	}
	r = mustMCS(t, "status", "web", "-n", ns, "--contexts", allMembers, "--no-color")
	for _, want := range []string{"Status:         Conflict", "TypeConflict   member2   member1", "Conflict   True     TypeConflict"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestStatusHeadless: a headless service is imported without clusterset IPs.
func TestStatusHeadless(t *testing.T) {
	ns := namespace(t, "e2e-status-headless", members...)
	deployment(t, "member1", ns, "db", 1)
	service(t, "member1", ns, "db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	waitFor(t, "member1's endpoints", func() bool { return len(sourceIPs(t, "member1", ns, "db")) == 1 })
	mustMCS(t, "expose", "db", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)

	l, _ := statusJSON(t, "-n", ns, "--contexts", allMembers)
	it := item(t, l, "db")
	if it.Health != status.Healthy || it.Type != "Headless" || it.Endpoints[0].Ready != 1 {
		t.Errorf("health %s %v type %s endpoints %+v", it.Health, it.Problems, it.Type, it.Endpoints)
	}
	for _, c := range it.Clusters {
		if c.Import == nil || c.Import.Type != "Headless" || len(c.Import.IPs) != 0 || len(c.Import.DerivedServiceIPs) != 0 || !c.Import.DerivedServiceExists {
			t.Errorf("%s: import %+v", c.Cluster, c.Import)
		}
	}
	r := mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "wide")
	f := row(t, r.stdout, ns, "db")
	if cell(t, r.stdout, f, "TYPE") != "Headless" || cell(t, r.stdout, f, "CLUSTERSET-IPS") != "None" || cell(t, r.stdout, f, "DERIVED-SERVICE") != "derived-db" {
		t.Errorf("headless row %v in\n%s", f, r.stdout)
	}
}

func statusWith(kc string, args ...string) result {
	cmd := exec.Command(binary, append([]string{"--kubeconfig", kc, "status"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_MCS_CONTEXTS=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return result{out.String(), errb.String(), code}
}

// TestStatusUnreachableMember: a member that cannot be reached is shown as such and warned about;
// the rest still prints, exit 0. When it is the exporter, the others' imports still tell.
func TestStatusUnreachableMember(t *testing.T) {
	ns := seedService(t, "e2e-status-unreach")
	kc := kubeconfigWith(t, map[string]string{"gone": closedPort(t)})
	contexts := allMembers + ",gone"

	r := statusWith(kc, "-n", ns, "--contexts", contexts, "-o", "json")
	if r.code != 0 || !strings.Contains(r.stderr, `Warning: cluster "gone" (context "gone") is unreachable`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var l status.MultiClusterServiceStatusList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Clusters) != 4 || l.Clusters[3].Name != "gone" || l.Clusters[3].State != snapshot.Unreachable || l.Clusters[0].State != snapshot.Reachable {
		t.Errorf("clusters %+v", l.Clusters)
	}
	it := item(t, &l, "serve")
	if it.Health != status.Healthy || it.Clusters[3].ImportState != status.ImportUnreachable {
		t.Errorf("health %s %v, gone: %+v", it.Health, it.Problems, it.Clusters[3])
	}
	r = statusWith(kc, "-n", ns, "--contexts", contexts, "-o", "wide")
	if r.code != 0 || cell(t, r.stdout, row(t, r.stdout, ns, "serve"), "IMPORTED-IN") != allMembers+",gone(Unreachable)" {
		t.Errorf("exit %d, table:\n%s", r.code, r.stdout)
	}
	if r := statusWith(kc, "-n", ns, "--contexts", "gone"); r.code != 1 || !strings.Contains(r.stderr, `cluster "gone": unreachable`) {
		t.Errorf("nothing readable: exit %d, stderr %q", r.code, r.stderr)
	}

	// member1 itself out of reach: the exporter is known from the others' imports, its endpoints
	// from their copies, and the row is degraded.
	cfg, _ := clientcmd.LoadFromFile(kc)
	cfg.Clusters[cfg.Contexts["member1"].Cluster].Server = cfg.Clusters["gone"].Server
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	r = statusWith(kc, "-n", ns, "--contexts", allMembers, "-o", "json")
	if r.code != 0 || !strings.Contains(r.stderr, `cluster "member1"`) {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	l = status.MultiClusterServiceStatusList{}
	_ = json.Unmarshal([]byte(r.stdout), &l)
	it = item(t, &l, "serve")
	if it.Health != status.Degraded || !slices.Equal(it.ExportingClusters, []string{"member1"}) ||
		it.Endpoints[0] != (status.SourceEndpoints{Cluster: "member1", Ready: 2, Total: 2, LastKnown: true}) {
		t.Errorf("health %s exporting %v endpoints %+v problems %v", it.Health, it.ExportingClusters, it.Endpoints, it.Problems)
	}
	r = statusWith(kc, "-n", ns, "--contexts", allMembers, "-o", "wide")
	if !strings.Contains(r.stderr, `its exports are shown as the other members last copied them, endpoints marked (stale)`) || strings.Contains(r.stderr, "missing") {
		t.Errorf("the warning does not say what the table shows: %q", r.stderr)
	}
	f := row(t, r.stdout, ns, "serve")
	if cell(t, r.stdout, f, "STATUS") != "Degraded" || cell(t, r.stdout, f, "READY") != "2/2(stale)" || cell(t, r.stdout, f, "ENDPOINTS-FROM") != "member1=2/2(stale)" ||
		cell(t, r.stdout, f, "IMPORTED-IN") != "member2,member3,member1(Unreachable)" {
		t.Errorf("table:\n%s", r.stdout)
	}
}

// TestStatusMissingCRDs: a member without the mcs-api CRDs is shown as such and warned about.
func TestStatusMissingCRDs(t *testing.T) {
	ns := seedService(t, "e2e-status-nocrds")
	kc := kubeconfigWith(t, map[string]string{"plain": noCRDsProxy(t)})
	if out, err := exec.Command("kubectl", "--kubeconfig", kc, "--context", "plain", "get", "serviceexports", "-n", ns).CombinedOutput(); err == nil {
		t.Fatalf("the proxy still serves ServiceExports: %s", out)
	}
	r := statusWith(kc, "-n", ns, "--contexts", allMembers+",plain", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stderr, `Warning: cluster "plain" (context "plain") has no ServiceExport/ServiceImport CRDs`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var l status.MultiClusterServiceStatusList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatal(err)
	}
	if c := l.Clusters[3]; c.Name != "plain" || c.State != snapshot.NoCRDs {
		t.Errorf("clusters %+v", l.Clusters)
	}
	it := item(t, &l, "serve")
	if it.Health != status.Healthy || it.Clusters[3].ImportState != status.ImportNoCRDs {
		t.Errorf("health %s %v, plain: %+v", it.Health, it.Problems, it.Clusters[3])
	}
	r = statusWith(kc, "-n", ns, "--contexts", allMembers+",plain", "-o", "wide")
	if cell(t, r.stdout, row(t, r.stdout, ns, "serve"), "IMPORTED-IN") != allMembers+",plain(NoCRDs)" {
		t.Errorf("table:\n%s", r.stdout)
	}
	if r := statusWith(kc, "-n", ns, "--contexts", "plain"); r.code != 1 || !strings.Contains(r.stderr, `cluster "plain": the ServiceExport/ServiceImport CRDs are not installed`) {
		t.Errorf("only a CRD-less cluster: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStatusKarmada: MultiClusterServices with their conditions, and the ServiceExport and
// ServiceImport of the guide with where their PropagationPolicies place them.
func TestStatusKarmada(t *testing.T) {
	needKarmada(t)
	ns := namespace(t, "e2e-status-karmada", karmadaCtx)
	service(t, karmadaCtx, ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers", "member1", "--consumers", "member2")
	mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers", "member1", "--consumers", "member2")

	get := func() *status.KarmadaServiceStatusList {
		t.Helper()
		r := mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "json")
		var l status.KarmadaServiceStatusList
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if l.APIVersion != "mcs.kubectl.io/v1alpha1" || l.Kind != "KarmadaServiceStatusList" || l.ControlPlane != karmadaCtx {
			t.Errorf("header %+v %s", l.TypeMeta, l.ControlPlane)
		}
		return &l
	}
	l := get()
	if len(l.MultiClusterServices) != 1 || len(l.ServiceExports) != 1 || len(l.ServiceImports) != 1 {
		t.Fatalf("objects %+v", l)
	}
	m := l.MultiClusterServices[0]
	if m.Health != status.Unknown || !slices.Equal(m.ProviderClusters, []string{"member1"}) || !slices.Equal(m.ConsumerClusters, []string{"member2"}) ||
		!slices.Equal(m.Types, []string{"CrossCluster"}) || !m.ServiceExists {
		t.Errorf("fresh MultiClusterService %+v", m)
	}
	if se := l.ServiceExports[0]; se.Health != status.Healthy || !slices.Equal(se.PlacedIn, []string{"member1"}) || se.APIVersion != "multicluster.x-k8s.io/v1alpha1" {
		t.Errorf("export %+v", se)
	}
	if si := l.ServiceImports[0]; si.Health != status.Healthy || !slices.Equal(si.PlacedIn, []string{"member2"}) || si.Type != "ClusterSetIP" || si.Ports[0].Port != 80 {
		t.Errorf("import %+v", si)
	}

	// What Karmada's controllers would report.
	setConditions := func(dispatched string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339)
		patch := fmt.Sprintf(`{"status":{"conditions":[
			{"type":"ServiceApplied","status":"True","reason":"ServiceAppliedSucceed","message":"Service is propagated to target clusters.","lastTransitionTime":%q},
			{"type":"EndpointSliceDispatched","status":%q,"reason":"EndpointSliceDispatchedFailed","message":"cluster member2 is not ready","lastTransitionTime":%q}]}}`, now, dispatched, now)
		if _, err := clients[karmadaCtx].dyn.Resource(mcsGVR).Namespace(ns).Patch(context.Background(), "serve", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	setConditions("False")
	m = get().MultiClusterServices[0]
	if m.Health != status.Degraded || len(m.Conditions) != 2 || !strings.Contains(strings.Join(m.Problems, " "), "cluster member2 is not ready") {
		t.Errorf("degraded MultiClusterService %+v", m)
	}
	r := mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "wide")
	f := row(t, r.stdout, ns, "serve")
	if cell(t, r.stdout, f, "STATUS") != "Degraded" || cell(t, r.stdout, f, "SERVICE-APPLIED") != "True" || cell(t, r.stdout, f, "ENDPOINTSLICE-DISPATCHED") != "False(EndpointSliceDispatchedFailed)" {
		t.Errorf("table:\n%s", r.stdout)
	}
	for _, want := range []string{"ServiceExport   " + ns + "   serve", "ServiceImport   " + ns + "   serve", "serve-export-policy", "serve-import-policy"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustMCS(t, "status", "serve", "-n", ns, "--karmada-context", karmadaCtx)
	if !strings.Contains(r.stdout, "EndpointSliceDispatched   False    EndpointSliceDispatchedFailed") || !strings.Contains(r.stdout, "cluster member2 is not ready") {
		t.Errorf("describe:\n%s", r.stdout)
	}
	setConditions("True")
	if m = get().MultiClusterServices[0]; m.Health != status.Healthy {
		t.Errorf("healthy MultiClusterService %+v", m)
	}
	r = mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "yaml")
	if !strings.Contains(r.stdout, "kind: KarmadaServiceStatusList") || !strings.Contains(r.stdout, "type: EndpointSliceDispatched") {
		t.Errorf("yaml:\n%s", r.stdout)
	}
}

// TestStatusWatch: --watch redraws when an export appears and when sync imports it.
func TestStatusWatch(t *testing.T) {
	ns := namespace(t, "e2e-status-watch", members...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig", kubeconfig, "status", "--watch", "-n", ns, "--contexts", allMembers, "-o", "wide") // IMPORTED
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("status --watch output:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	})
	waitFor(t, "the first (empty) table", func() bool {
		return strings.Contains(errb.String(), "No multi-cluster services found in "+ns+" namespace.")
	})
	service(t, "member1", ns, "serve")
	start := time.Now()
	userExport(t, "member1", ns, "serve")
	waitFor(t, "a row for the export, imported nowhere", func() bool { return rowHas(out.String(), "serve", "0/3") })
	t.Logf("export to redrawn row: %v", time.Since(start))
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	waitFor(t, "the row imported everywhere", func() bool { return rowHas(out.String(), "serve", "3/3") })
}

// rowHas says whether the last table drawn has a row for name with a field equal to value.
func rowHas(out, name, value string) bool {
	tables := strings.Split(out, "\n\n")
	for _, line := range strings.Split(tables[len(tables)-1], "\n") {
		f := strings.Fields(line)
		if slices.Contains(f, name) && slices.Contains(f, value) {
			return true
		}
	}
	return false
}
