package status

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

var (
	t0  = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(90 * time.Minute)
)

func at(min int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(min) * time.Minute)) }

func ptr[T any](v T) *T { return &v }

func export(ns, name string, created int) *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at(created),
		Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}}}
}

func service(ns, name string, headless bool) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.9", ClusterIPs: []string{"10.0.0.9"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	if headless {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
	}
	return s
}

// slice is a source slice of service svc; ready says, per endpoint, whether it is ready.
func slice(ns, svc, name string, ready ...bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4}
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.0." + string(rune('1'+i))},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(r)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name + "-pod-" + string(rune('a'+i))}})
	}
	return s
}

// copyOf is an imported copy (as sync writes it) of a source slice from cluster src.
func copyOf(s *discoveryv1.EndpointSlice, svc, src string) *discoveryv1.EndpointSlice {
	c := s.DeepCopy()
	c.Name = names.EndpointSliceName(svc, src, s.Name)
	c.Labels = map[string]string{
		mcsv1beta1.LabelServiceName: svc, mcsv1beta1.LabelSourceCluster: src,
		discoveryv1.LabelServiceName:      names.DerivedServiceName(svc),
		names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, names.ManagedByLabel: names.ManagedByValue,
	}
	for i := range c.Endpoints {
		c.Endpoints[i].TargetRef = nil
	}
	return c
}

func serviceImport(ns, name string, typ mcsv1beta1.ServiceImportType, ip string, sources ...string) *mcsv1beta1.ServiceImport {
	si := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at(2),
		Labels:      map[string]string{names.ManagedByLabel: names.ManagedByValue},
		Annotations: map[string]string{names.DerivedServiceAnnotation: names.DerivedServiceName(name)}},
		Spec: mcsv1beta1.ServiceImportSpec{Type: typ, Ports: []mcsv1beta1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}}
	if ip != "" {
		si.Spec.IPs = []string{ip}
	}
	for _, s := range sources {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: s})
	}
	return si
}

func derived(ns, name, ip string) *corev1.Service {
	s := service(ns, names.DerivedServiceName(name), ip == "")
	s.Labels = map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: name}
	if ip != "" {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
	}
	return s
}

func cluster(id string, objs ...any) snapshot.Cluster {
	c := snapshot.Cluster{ID: id, Context: id, State: snapshot.Reachable, MCSAPIVersion: "v1beta1", Objects: snapshot.Objects{Namespaces: []string{"default", "demo"}}}
	for _, o := range objs {
		switch o := o.(type) {
		case *mcsv1beta1.ServiceExport:
			c.ServiceExports = append(c.ServiceExports, o)
		case *mcsv1beta1.ServiceImport:
			c.ServiceImports = append(c.ServiceImports, o)
		case *corev1.Service:
			c.Services = append(c.Services, o)
		case *discoveryv1.EndpointSlice:
			c.EndpointSlices = append(c.EndpointSlices, o)
		default:
			panic(o)
		}
	}
	return c
}

// seed is Karmada's guide after `expose` + `sync`: serve runs in member1 (2 pods) and is imported
// in all three clusters.
func seed() []snapshot.Cluster {
	src := slice("demo", "serve", "serve-abc", true, true)
	imports := func(id, ip string) []any {
		return []any{serviceImport("demo", "serve", mcsv1beta1.ClusterSetIP, ip, "member1"), derived("demo", "serve", ip), copyOf(src, "serve", "member1")}
	}
	return []snapshot.Cluster{
		cluster("member1", append([]any{export("demo", "serve", 1), service("demo", "serve", false), src}, imports("member1", "10.96.0.1")...)...),
		cluster("member2", imports("member2", "10.96.0.2")...),
		cluster("member3", imports("member3", "10.96.0.3")...),
	}
}

func only(t *testing.T, l *MultiClusterServiceStatusList) MultiClusterServiceStatus {
	t.Helper()
	if len(l.Items) != 1 {
		t.Fatalf("want 1 item, got %d: %+v", len(l.Items), l.Items)
	}
	return l.Items[0]
}

func hasProblem(it MultiClusterServiceStatus, sub string) bool {
	for _, p := range it.Problems {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

func TestHealthy(t *testing.T) {
	l := Build(seed())
	if l.APIVersion != APIVersion || l.Kind != KindList || len(l.Clusters) != 3 {
		t.Fatalf("list header %+v", l.TypeMeta)
	}
	it := only(t, l)
	if it.Health != Healthy || len(it.Problems) != 0 {
		t.Errorf("health %s, problems %v", it.Health, it.Problems)
	}
	if it.Type != "ClusterSetIP" || !reflect.DeepEqual(it.Ports, []Port{{Name: "http", Protocol: "TCP", Port: 80}}) {
		t.Errorf("type %q ports %+v", it.Type, it.Ports)
	}
	if !reflect.DeepEqual(it.ExportingClusters, []string{"member1"}) || !reflect.DeepEqual(it.ImportingClusters, []string{"member1", "member2", "member3"}) {
		t.Errorf("exporting %v importing %v", it.ExportingClusters, it.ImportingClusters)
	}
	if !reflect.DeepEqual(it.Endpoints, []SourceEndpoints{{Cluster: "member1", Ready: 2, Total: 2}}) {
		t.Errorf("endpoints %+v", it.Endpoints)
	}
	if !it.CreationTimestamp.Equal(ptr(at(1))) {
		t.Errorf("age from %v, want the export's", it.CreationTimestamp)
	}
	m2 := it.Clusters[1]
	if m2.ImportState != ImportReady || m2.Import == nil || m2.Import.DerivedService != "derived-serve" ||
		!reflect.DeepEqual(m2.Import.IPs, []string{"10.96.0.2"}) || !reflect.DeepEqual(m2.Import.DerivedServiceIPs, []string{"10.96.0.2"}) ||
		!reflect.DeepEqual(m2.ImportedEndpoints, []SourceEndpoints{{Cluster: "member1", Ready: 2, Total: 2}}) || m2.Export != nil {
		t.Errorf("member2 breakdown %+v import %+v", m2, m2.Import)
	}
	m1 := it.Clusters[0]
	if m1.Export == nil || !m1.Export.Valid || !m1.Export.Managed || m1.Service == nil || m1.Service.Type != "ClusterIP" || m1.Endpoints.Ready != 2 {
		t.Errorf("member1 breakdown %+v", m1)
	}
}

func TestConflictOldestWins(t *testing.T) {
	cs := seed()
	// member2 exported a headless web first, member1 a ClusterIP one later.
	cs[0].ServiceExports = append(cs[0].ServiceExports, export("demo", "web", 10))
	cs[0].Services = append(cs[0].Services, service("demo", "web", false))
	cs[0].EndpointSlices = append(cs[0].EndpointSlices, slice("demo", "web", "web-1", true))
	cs[1].ServiceExports = append(cs[1].ServiceExports, export("demo", "web", 5))
	cs[1].Services = append(cs[1].Services, service("demo", "web", true))
	cs[1].EndpointSlices = append(cs[1].EndpointSlices, slice("demo", "web", "web-2", true, false))
	for i := range cs {
		cs[i].ServiceImports = append(cs[i].ServiceImports, serviceImport("demo", "web", mcsv1beta1.Headless, "", "member1", "member2"))
	}
	l := Build(cs)
	if len(l.Items) != 2 || l.Items[1].Name != "web" {
		t.Fatalf("items %+v", l.Items)
	}
	it := l.Items[1]
	if it.Health != Conflict || it.Type != "Headless" {
		t.Errorf("health %s type %s", it.Health, it.Type)
	}
	if len(it.Conflicts) != 1 || it.Conflicts[0].Reason != "TypeConflict" || it.Conflicts[0].Winner != "member2" ||
		!reflect.DeepEqual(it.Conflicts[0].Disagreeing, []string{"member1"}) || !strings.Contains(it.Conflicts[0].Message, `"member2"`) {
		t.Errorf("conflicts %+v", it.Conflicts)
	}
	if !reflect.DeepEqual(it.Endpoints, []SourceEndpoints{{Cluster: "member1", Ready: 1, Total: 1}, {Cluster: "member2", Ready: 1, Total: 2}}) {
		t.Errorf("endpoints %+v", it.Endpoints)
	}
	if !it.CreationTimestamp.Equal(ptr(at(5))) {
		t.Errorf("age from %v, want the oldest export's", it.CreationTimestamp)
	}
	if l.Items[0].Health != Healthy {
		t.Errorf("serve is %s: %v", l.Items[0].Health, l.Items[0].Problems)
	}
}

func TestHeadless(t *testing.T) {
	src := slice("demo", "db", "db-1", true)
	cs := []snapshot.Cluster{
		cluster("member1", export("demo", "db", 1), service("demo", "db", true), src,
			serviceImport("demo", "db", mcsv1beta1.Headless, "", "member1"), derived("demo", "db", ""), copyOf(src, "db", "member1")),
		cluster("member2", serviceImport("demo", "db", mcsv1beta1.Headless, "", "member1"), derived("demo", "db", ""), copyOf(src, "db", "member1")),
	}
	it := only(t, Build(cs))
	if it.Health != Healthy || it.Type != "Headless" {
		t.Errorf("health %s %v type %s", it.Health, it.Problems, it.Type)
	}
	if c := it.Clusters[1]; c.ImportState != ImportReady || len(c.Import.IPs) != 0 || len(c.Import.DerivedServiceIPs) != 0 || !c.Import.DerivedServiceExists {
		t.Errorf("headless import %+v", c.Import)
	}
	row := Row(it, true, now)
	if c := cellOf(t, row, true, "clusterset-ips"); c != "None" {
		t.Errorf("wide clusterset-ips %q, want None", c)
	}
}

func TestUnreachableExporter(t *testing.T) {
	src := slice("demo", "serve", "serve-abc", true)
	cs := []snapshot.Cluster{
		cluster("member1", serviceImport("demo", "serve", mcsv1beta1.ClusterSetIP, "10.96.0.1", "member3"), derived("demo", "serve", "10.96.0.1"), copyOf(src, "serve", "member3")),
		cluster("member2", serviceImport("demo", "serve", mcsv1beta1.ClusterSetIP, "10.96.0.2", "member3")),
		{ID: "member3", Context: "ctx3", State: snapshot.Unreachable, Message: "unreachable: connection refused"},
	}
	l := Build(cs)
	it := only(t, l)
	if it.Health != Degraded || !hasProblem(it, `"member3" exports it but is unreachable`) {
		t.Errorf("health %s problems %v", it.Health, it.Problems)
	}
	if !reflect.DeepEqual(it.ExportingClusters, []string{"member3"}) {
		t.Errorf("exporting %v", it.ExportingClusters)
	}
	if !reflect.DeepEqual(it.Endpoints, []SourceEndpoints{{Cluster: "member3", Ready: 1, Total: 1, LastKnown: true}}) {
		t.Errorf("endpoints %+v", it.Endpoints)
	}
	if c := it.Clusters[2]; c.State != snapshot.Unreachable || c.ImportState != ImportUnreachable || c.Export != nil {
		t.Errorf("member3 breakdown %+v", c)
	}
	if l.Clusters[2].State != snapshot.Unreachable || l.Clusters[2].Context != "ctx3" {
		t.Errorf("clusters %+v", l.Clusters)
	}
	row := Row(it, true, now)
	if cellOf(t, row, true, "imported-in") != "member1,member2,member3(Unreachable)" || cellOf(t, row, true, "endpoints-from") != "member3=1/1(stale)" ||
		cellOf(t, row, true, "ready") != "1/1(stale)" || cellOf(t, row, true, "exported") != "1/3" || cellOf(t, row, true, "imported") != "2/3" {
		t.Errorf("row %q", row)
	}
}

func TestUnreachableImporterAndNoCRDs(t *testing.T) {
	cs := append(seed()[:2],
		snapshot.Cluster{ID: "member3", Context: "member3", State: snapshot.Unreachable, Message: "unreachable"},
		snapshot.Cluster{ID: "plain", Context: "plain", State: snapshot.NoCRDs, Message: "no CRDs"})
	it := only(t, Build(cs))
	// The other clusters are fine: not knowing about member3 does not degrade the service.
	if it.Health != Healthy {
		t.Errorf("health %s: %v", it.Health, it.Problems)
	}
	if it.Clusters[3].ImportState != ImportNoCRDs || it.Clusters[2].ImportState != ImportUnreachable {
		t.Errorf("breakdown %+v", it.Clusters)
	}
	if c := cellOf(t, Row(it, true, now), true, "imported-in"); c != "member1,member2,member3(Unreachable),plain(NoCRDs)" {
		t.Errorf("imported-in %q", c)
	}
}

func TestLastKnownCluster(t *testing.T) {
	cs := seed()
	cs[0].State, cs[0].LastKnown = snapshot.Unreachable, true
	it := only(t, Build(cs))
	if !reflect.DeepEqual(it.Endpoints, []SourceEndpoints{{Cluster: "member1", Ready: 2, Total: 2, LastKnown: true}}) {
		t.Errorf("endpoints %+v", it.Endpoints)
	}
	if it.Health != Degraded || it.Clusters[0].ImportState != ImportUnreachable {
		t.Errorf("health %s %v, member1 %s", it.Health, it.Problems, it.Clusters[0].ImportState)
	}
	if c := cellOf(t, Row(it, true, now), true, "imported-in"); c != "member1(Unreachable),member2,member3" {
		t.Errorf("imported-in %q", c)
	}
}

func TestDegradedStates(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func([]snapshot.Cluster) []snapshot.Cluster
		problem string
	}{
		{"not synced", func(cs []snapshot.Cluster) []snapshot.Cluster {
			return []snapshot.Cluster{cluster("member1", export("demo", "serve", 1), service("demo", "serve", false), slice("demo", "serve", "s", true)), cluster("member2")}
		}, "Not imported in any cluster"},
		{"missing in one cluster", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[2].ServiceImports = nil
			return cs
		}, `Not imported in "member3", which has the namespace`},
		{"no IP yet", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[1].ServiceImports[0].Spec.IPs = nil
			return cs
		}, `in "member2" has no clusterset IP`},
		{"no ready endpoints", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[0].EndpointSlices[0] = slice("demo", "serve", "serve-abc", false, false)
			return cs
		}, "No ready endpoints"},
		{"invalid export", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[1].ServiceExports = append(cs[1].ServiceExports, export("demo", "serve", 3))
			return cs
		}, `export in cluster "member2" is not valid (NoService)`},
		{"left over import", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[0].ServiceExports = nil
			return cs
		}, "No cluster exports it: the ServiceImports in \"member1\", \"member2\", \"member3\" are left over"},
		{"a write sync cannot make", func(cs []snapshot.Cluster) []snapshot.Cluster {
			msg := `Service demo/derived-serve in "member3" cannot be written: Service "derived-serve" is invalid: spec.ports[0].name: Required value.`
			cs[0].ServiceExports[0].Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Failed", Message: msg}}
			return cs
		}, `Service demo/derived-serve in "member3" cannot be written: Service "derived-serve" is invalid: spec.ports[0].name: Required value.`},
		{"only invalid exports", func(cs []snapshot.Cluster) []snapshot.Cluster {
			cs[0].Services = cs[0].Services[1:] // drops the Service serve, keeps derived-serve
			return cs
		}, "No valid export"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := only(t, Build(tc.mutate(seed())))
			if it.Health != Degraded || !hasProblem(it, tc.problem) {
				t.Errorf("health %s problems %q, want %q", it.Health, it.Problems, tc.problem)
			}
		})
	}
}

// A member without the namespace cannot import the service (KEP-1645): not Missing, which sync
// would fix, but Degraded all the same, naming the cluster and why.
func TestNoNamespaceIsDegraded(t *testing.T) {
	cs := seed()
	cs[2].ServiceImports, cs[2].Namespaces = nil, []string{"default"}
	it := only(t, Build(cs))
	want := `Not imported in "member3": it has no namespace "demo" (a service is imported only where its namespace exists).`
	if it.Health != Degraded || !reflect.DeepEqual(it.Problems, []string{want}) || it.Clusters[2].ImportState != ImportNoNamespace {
		t.Errorf("health %s %q, member3 %s", it.Health, it.Problems, it.Clusters[2].ImportState)
	}
	// Unreachable, it may have the namespace by now: nothing is said of it.
	cs[2].State = snapshot.Unreachable
	if it := only(t, Build(cs)); slices.Contains(it.Problems, want) {
		t.Errorf("problems %q name an unreachable cluster", it.Problems)
	}
}

func TestEndpointsCountedOnce(t *testing.T) {
	v4 := slice("demo", "serve", "v4", true, false)
	v6 := slice("demo", "serve", "v6", true, false)
	v6.AddressType = discoveryv1.AddressTypeIPv6
	for i := range v6.Endpoints {
		v6.Endpoints[i].Addresses = []string{"fd00::" + string(rune('1'+i))}
		v6.Endpoints[i].TargetRef = v4.Endpoints[i].TargetRef // the same pods, their IPv6 addresses
	}
	noCond := slice("demo", "serve", "nocond", true)
	noCond.Endpoints[0].Conditions.Ready = nil
	r, total := count([]*discoveryv1.EndpointSlice{v4, v6, noCond})
	if r != 2 || total != 3 {
		t.Errorf("ready/total %d/%d, want 2/3 (a dual-stack pod counts once; unset ready is ready)", r, total)
	}
}

func TestItemsSortedAndKeysFromImportsToo(t *testing.T) {
	cs := seed()
	cs[1].ServiceImports = append(cs[1].ServiceImports, serviceImport("alpha", "zed", mcsv1beta1.ClusterSetIP, "10.9.9.9"))
	l := Build(cs)
	var got []types.NamespacedName
	for _, it := range l.Items {
		got = append(got, types.NamespacedName{Namespace: it.Namespace, Name: it.Name})
	}
	want := []types.NamespacedName{{Namespace: "alpha", Name: "zed"}, {Namespace: "demo", Name: "serve"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items %v", got)
	}
	if l.Items[0].Type != "ClusterSetIP" || len(l.Items[0].Ports) != 1 {
		t.Errorf("an import-only row takes type and ports from the import: %+v", l.Items[0])
	}
}
