package engine

import (
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func without(obs Observed, id string) Observed {
	out := cloneObs(obs)
	out.Clusters = nil
	for _, c := range obs.Clusters {
		if c.ID != id {
			out.Clusters = append(out.Clusters, c)
		}
	}
	return out
}

func verbs(acts []Action, verb string) []string {
	var out []string
	for _, s := range summary(acts) {
		if strings.Contains(s, " "+verb+" ") {
			out = append(out, s)
		}
	}
	return out
}

// An unread member (down since start, not synced, outside --contexts) is not "not exporting":
// its slices and its place in status.clusters stand, while what the read members decide alone
// (m1 unexports) goes ahead.
func TestUnreadMemberRecordsStand(t *testing.T) {
	obs := twoExporters()
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatal("did not converge")
	}
	unread := without(obs, "m2")
	unread.Members = []string{"m1", "m2", "m3"}
	if acts := Plan(unread, Compute(unread)); len(acts) != 0 {
		t.Fatalf("m2 unread: %q", summary(acts))
	}

	// m1 unexports while m2 is unread: only m1's slices go; the imports stay, listing m2.
	unread.Clusters[0].ServiceExports = nil
	d := Compute(unread)
	acts := Plan(unread, d)
	s1a := names.EndpointSliceName("serve", "m1", "serve-a")
	if got, want := verbs(acts, "delete"), []string{"m1 delete EndpointSlice demo/" + s1a, "m3 delete EndpointSlice demo/" + s1a}; !reflect.DeepEqual(got, want) {
		t.Errorf("deletes %q, want %q", got, want)
	}
	for _, a := range acts {
		if a.Kind == snapshot.KindServiceImport && a.Verb == VerbStatus {
			if got := a.Object.(*mcsv1beta1.ServiceImport).Status.Clusters; len(got) != 1 || got[0].Cluster != "m2" {
				t.Errorf("%s: import clusters %v, want [m2]", a.Cluster, got)
			}
		}
	}
	for _, id := range []string{"m1", "m3"} {
		if len(d.Clusters[id].Held) == 0 {
			t.Errorf("%s: nothing held for m2", id)
		}
		for _, h := range d.Clusters[id].Held {
			if h.Source != "m2" || h.Outside {
				t.Errorf("%s: held %+v", id, h)
			}
		}
	}

	// Outside the clusterset (not in Members): held all the same, and said so.
	outside := without(obs, "m2")
	outside.Members = []string{"m1", "m3"}
	d = Compute(outside)
	if acts := Plan(outside, d); len(acts) != 0 {
		t.Errorf("m2 outside --contexts: %q", summary(acts))
	}
	if h := d.Clusters["m3"].Held; len(h) == 0 || !h[0].Outside {
		t.Errorf("m2 outside the clusterset not reported: %+v", h)
	}

	// Evicted (read before, unreachable past --unreachable-timeout): its records go.
	evicted := without(obs, "m2")
	evicted.Evicted = []string{"m2"}
	s2b := names.EndpointSliceName("serve", "m2", "serve-b")
	if got, want := verbs(Plan(evicted, Compute(evicted)), "delete"), []string{"m1 delete EndpointSlice demo/" + s2b, "m3 delete EndpointSlice demo/" + s2b}; !reflect.DeepEqual(got, want) {
		t.Errorf("m2 evicted: deletes %q, want %q", got, want)
	}
}

// The service's only exporter is unread: its import, derived Service and slices all stand.
func TestUnreadOnlyExporterKeepsImport(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "serve-a", "10.1.0.1")),
		member("m2"),
	}}
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatal("did not converge")
	}
	unread := without(obs, "m1")
	if acts := Plan(unread, Compute(unread)); len(acts) != 0 {
		t.Errorf("m1 (the only exporter) unread: %q", summary(acts))
	}
}

// A service named derived-X (X's own derived Service, exported by mistake) is decided alone: X's
// derived Service and slices are never collected by its sync.
func TestScopeNeverTouchesAnotherService(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "web"), mkExport("demo", "web", 0), mkSlice("demo", "web", "web-a", "10.1.0.1")),
		member("m2"),
	}}
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatal("did not converge")
	}
	obs.Clusters[0].ServiceExports = append(obs.Clusters[0].ServiceExports, mkExport("demo", "derived-web", 1))
	scoped := cloneObs(obs)
	scoped.Services = []types.NamespacedName{nn("demo", "derived-web")}
	for _, a := range Plan(scoped, Compute(scoped)) {
		if a.Kind != snapshot.KindServiceExport {
			t.Errorf("sync of demo/derived-web writes %s %s %s", a.Verb, a.Kind, a.Name)
		}
	}
	if got := Compute(scoped).Clusters["m1"].ExportConditions[nn("demo", "derived-web")]; len(got) != 1 || got[0].Reason != string(mcsv1beta1.ServiceExportReasonNoService) {
		t.Errorf("export of our derived Service: conditions %+v, want Valid=False/NoService", got)
	}
}

// KEP: traffic for a port goes only to constituents that export that port the same way.
func TestServedPortsPerSource(t *testing.T) {
	m2svc := mkService("demo", "serve",
		corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP})
	m2slice := mkSlice("demo", "serve", "serve-b", "10.2.0.1")
	m2slice.Ports = append(m2slice.Ports, discoveryv1.EndpointPort{Name: ptr("metrics"), Port: ptr(int32(9090)), Protocol: ptr(corev1.ProtocolTCP)})
	onlyHTTP := mkSlice("demo", "serve", "serve-c", "10.2.0.9") // its one port is the mismatched http
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "serve-a", "10.1.0.1")),
		member("m2", m2svc, mkExport("demo", "serve", 1), m2slice, onlyHTTP),
	}}
	d := Compute(obs)
	got := map[string][]string{}
	for _, s := range d.Clusters["m1"].EndpointSlices {
		for _, p := range s.Ports {
			got[s.Labels[mcsv1beta1.LabelSourceCluster]] = append(got[s.Labels[mcsv1beta1.LabelSourceCluster]], *p.Name)
		}
		if s.Name == names.EndpointSliceName("serve", "m2", "serve-c") {
			t.Errorf("a slice left with no served port was copied")
		}
	}
	if want := map[string][]string{"m1": {"http"}, "m2": {"metrics"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ports by source %v, want %v", got, want)
	}
	if len(d.Conflicts) != 1 || d.Conflicts[0].Reason != string(mcsv1beta1.ServiceExportReasonPortConflict) {
		t.Errorf("conflicts %+v, want one PortConflict", d.Conflicts)
	}
}

// A dual-stack export, IPv6 first: the derived Service asks for both families and names none, so
// that a single-stack cluster of either family accepts it (one without IPv6 refuses a Service
// naming IPv6, PreferDualStack or not); the import lists the families its derived Service got.
func TestDualStackDerivedService(t *testing.T) {
	svc := mkService("demo", "serve")
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", svc, mkExport("demo", "serve", 0))}}
	d := findService(Compute(obs).Clusters["m1"], "demo", "derived-serve")
	if d.Spec.IPFamilyPolicy == nil || *d.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack || d.Spec.IPFamilies != nil {
		t.Fatalf("derived Service policy %v families %v, want PreferDualStack and none named", d.Spec.IPFamilyPolicy, d.Spec.IPFamilies)
	}
	// The importing cluster is IPv4 single-stack: the derived Service got IPv4 only.
	derived := d.DeepCopy()
	derived.Labels[names.ManagedByLabel] = names.ManagedByValue
	derived.UID, derived.Spec.ClusterIPs, derived.Spec.IPFamilies = "u1", []string{"10.96.0.9"}, []corev1.IPFamily{corev1.IPv4Protocol}
	obs.Clusters[0].Services = append(obs.Clusters[0].Services, derived)
	si := Compute(obs).Clusters["m1"].ServiceImports[0]
	if !reflect.DeepEqual(si.Spec.IPs, []string{"10.96.0.9"}) || !reflect.DeepEqual(si.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
		t.Errorf("import ips %v families %v, want one IP per family served here", si.Spec.IPs, si.Spec.IPFamilies)
	}
	for _, a := range Plan(obs, Compute(obs)) {
		if a.Kind == snapshot.KindService {
			t.Errorf("a derived Service of the cluster's own family is rewritten: %+v", a)
		}
	}
	// The export becomes IPv6 single-stack: the primary family is immutable, so the derived
	// Service is replaced.
	obs.Clusters[0].Services[0].Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	var got []string
	for _, a := range Plan(obs, Compute(obs)) {
		if a.Kind == snapshot.KindService {
			got = append(got, a.Verb)
		}
	}
	if !reflect.DeepEqual(got, []string{VerbDelete, VerbCreate}) {
		t.Errorf("primary family change: %v, want delete then create", got)
	}
}

// A member serving the v0.1.0 CRDs gets only the fields they declare, and once it holds them
// nothing more is written (no endless rewrite of fields it drops).
func TestLegacySchemaMember(t *testing.T) {
	imp, exp := legacySchemas(t)
	svc := mkService("demo", "serve")
	itp := corev1.ServiceInternalTrafficPolicyLocal
	svc.Spec.InternalTrafficPolicy, svc.Spec.IPFamilies = &itp, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", svc, mkExport("demo", "serve", 0))}}
	obs.Clusters[0].ImportSchema, obs.Clusters[0].ExportSchema = imp, exp
	si := Compute(obs).Clusters["m1"].ServiceImports[0]
	if si.Spec.InternalTrafficPolicy != nil || si.Spec.IPFamilies != nil {
		t.Errorf("v0.1.0 import holds undeclared fields: %+v", si.Spec)
	}
	n, left := converge(&obs, 8)
	if len(left) != 0 {
		t.Fatalf("no convergence after %d passes on a v0.1.0 member: %q", n, summary(left))
	}
	for _, s := range obs.Clusters[0].ServiceImports {
		if len(s.Spec.IPs) > 1 {
			t.Errorf("ips %v past the schema's maxItems", s.Spec.IPs)
		}
	}
}

func legacySchemas(t *testing.T) (imp, exp Pruner) {
	t.Helper()
	i, err := crdschema.FromCRD(crdFile(t, "../../crdschema/testdata/v0.1.0-serviceimports.yaml"), "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	e, err := crdschema.FromCRD(crdFile(t, "../../crdschema/testdata/v0.1.0-serviceexports.yaml"), "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	return i, e
}

// The Ready message carries no counts: a member going unreachable rewrites no export status.
func TestReachabilityFlapWritesNoStatus(t *testing.T) {
	obs := twoExporters()
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatal("did not converge")
	}
	flap := cloneObs(obs)
	flap.Clusters[2].Reachable = false
	if acts := Plan(flap, Compute(flap)); len(acts) != 0 {
		t.Errorf("m3 unreachable: %q", summary(acts))
	}
}

func crdFile(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A schema that drops nothing the engine writes costs nothing per sync; the v0.1.0 one is kept.
func TestPruningOnlyWhenSchemaDrops(t *testing.T) {
	imp, exp := legacySchemas(t)
	if Pruning(imp, snapshot.KindServiceImport) == nil {
		t.Error("v0.1.0 ServiceImport schema (no ipFamilies, one ip) taken as complete")
	}
	crds, err := mcsapi.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	full, err := crdschema.FromCRD(crds[1], "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	if Pruning(full, snapshot.KindServiceImport) != nil {
		t.Error("the plugin's own v1beta1 ServiceImport schema taken as pruning")
	}
	fullExp, err := crdschema.FromCRD(crds[0], "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	if Pruning(fullExp, snapshot.KindServiceExport) != nil {
		t.Error("the plugin's own v1beta1 ServiceExport schema taken as pruning")
	}
	if Pruning(exp, snapshot.KindServiceExport) == nil {
		t.Error("v0.1.0 ServiceExport schema (conditions without observedGeneration) taken as complete")
	}
}
