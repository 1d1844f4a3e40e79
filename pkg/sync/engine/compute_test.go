package engine

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// threeMembers exports demo/serve from member1 (oldest), member2 and member3; mut changes the
// Service/export of one of them before the objects are assembled.
func threeMembers(mut func(id string, svc *corev1.Service, exp *mcsv1beta1.ServiceExport)) Observed {
	obs := Observed{Now: now}
	for i, id := range []string{"member1", "member2", "member3"} {
		svc, exp := mkService("demo", "serve"), mkExport("demo", "serve", i)
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		if mut != nil {
			mut(id, svc, exp)
		}
		obs.Clusters = append(obs.Clusters, member(id, svc, exp))
	}
	return obs
}

func TestConflicts(t *testing.T) {
	httpPort := func(port int32, proto corev1.Protocol, name string) []corev1.ServicePort {
		return []corev1.ServicePort{{Name: name, Port: port, Protocol: proto}}
	}
	cases := []struct {
		name        string
		mut         func(id string, svc *corev1.Service, exp *mcsv1beta1.ServiceExport)
		reasons     []string // expected Conflict.Reason list, sorted
		disagreeing []string // of the first conflict
		message     string   // of the first conflict, when not empty
		check       func(t *testing.T, si *mcsv1beta1.ServiceImport)
	}{
		{name: "no conflict", mut: nil},
		{
			name: "type", reasons: []string{"TypeConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member2" {
					s.Spec.ClusterIP = corev1.ClusterIPNone
				}
			},
			message: `Conflicting type. Using "ClusterSetIP" from oldest service export in "member1". Not using "Headless" from "member2". 1/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				if si.Spec.Type != mcsv1beta1.ClusterSetIP {
					t.Errorf("type %q, want winner's ClusterSetIP", si.Spec.Type)
				}
			},
		},
		{
			name: "port: same name, different port", reasons: []string{"PortConflict"}, disagreeing: []string{"member2", "member3"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id != "member1" {
					s.Spec.Ports = httpPort(81, corev1.ProtocolTCP, "http")
				}
			},
			message: `Conflicting ports. Using "http:80/TCP" from oldest service export in "member1". Not using "http:81/TCP" from "member2", "member3". Nothing answers on 81/TCP. Traffic to "http:80/TCP" does not reach "member2", "member3". 2/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				want := []mcsv1beta1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}
				if !reflect.DeepEqual(si.Spec.Ports, want) {
					t.Errorf("ports %+v, want %+v", si.Spec.Ports, want)
				}
			},
		},
		{
			name: "port: same protocol/port, different name", reasons: []string{"PortConflict"}, disagreeing: []string{"member3"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member3" {
					s.Spec.Ports = httpPort(80, "", "web")
				}
			},
		},
		{
			name: "port: different appProtocol", reasons: []string{"PortConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member2" {
					s.Spec.Ports[0].AppProtocol = ptr("http2")
				}
			},
		},
		{
			name: "port: different protocol, same name", reasons: []string{"PortConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member2" {
					s.Spec.Ports = httpPort(80, corev1.ProtocolUDP, "http")
				}
			},
		},
		{
			// SPEC 4 / KEP: the union is served, and any difference is a PortConflict; a
			// protocol left to its default is no difference.
			name: "port only in one cluster is a union and a conflict", reasons: []string{"PortConflict"}, disagreeing: []string{"member3"},
			message: `Conflicting ports. Using "http:80/TCP" from oldest service export in "member1" and "metrics:9090/TCP" from service export in "member3". 1/3 clusters disagree.`,
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member3" {
					s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090})
				}
				if id == "member2" {
					s.Spec.Ports[0].Protocol = "" // defaults to TCP: equal
				}
			},
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				want := []mcsv1beta1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80}, {Name: "metrics", Protocol: "TCP", Port: 9090}}
				if !reflect.DeepEqual(si.Spec.Ports, want) {
					t.Errorf("ports %+v, want %+v", si.Spec.Ports, want)
				}
			},
		},
		{
			name: "session affinity", reasons: []string{"SessionAffinityConflict"}, disagreeing: []string{"member3"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member3" {
					s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				}
			},
			message: `Conflicting session affinity. Using "None" from oldest service export in "member1". Not using "ClientIP" from "member3". 1/3 clusters disagree.`,
		},
		{
			name: "session affinity config", reasons: []string{"SessionAffinityConfigConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				if id == "member2" {
					s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
				}
			},
			message: `Conflicting session affinity config. Using "timeoutSeconds=10800" from oldest service export in "member1". Not using "timeoutSeconds=60" from "member2". 1/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				if si.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || si.Spec.SessionAffinityConfig != nil {
					t.Errorf("affinity %q config %v, want winner's ClientIP with default config", si.Spec.SessionAffinity, si.Spec.SessionAffinityConfig)
				}
			},
		},
		{
			name: "internal traffic policy", reasons: []string{"InternalTrafficPolicyConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				switch id {
				case "member2":
					s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
				case "member3":
					s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster) // == unset
				}
			},
			message: `Conflicting internal traffic policy. Using "Cluster" from oldest service export in "member1". Not using "Local" from "member2". 1/3 clusters disagree.`,
		},
		{
			name: "traffic distribution", reasons: []string{"TrafficDistributionConflict"}, disagreeing: []string{"member2", "member3"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member1" {
					s.Spec.TrafficDistribution = ptr("PreferClose")
				}
			},
			message: `Conflicting traffic distribution. Using "PreferClose" from oldest service export in "member1". Not using "<none>" from "member2", "member3". 2/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				if strPtrVal(si.Spec.TrafficDistribution) != "PreferClose" {
					t.Errorf("trafficDistribution %v", si.Spec.TrafficDistribution)
				}
			},
		},
		{
			name: "ip families", reasons: []string{"IPFamilyConflict"}, disagreeing: []string{"member3"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member3" {
					s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
				}
			},
			message: `Conflicting IP families. Using "IPv4" from oldest service export in "member1". Not using "IPv6" from "member3". 1/3 clusters disagree.`,
		},
		{
			name: "labels", reasons: []string{"LabelsConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, _ *corev1.Service, e *mcsv1beta1.ServiceExport) {
				e.Spec.ExportedLabels = map[string]string{"tier": "web"}
				if id == "member2" {
					e.Spec.ExportedLabels = map[string]string{"tier": "db"}
				}
			},
			message: `Conflicting exported labels. Using "tier=web" from oldest service export in "member1". Not using "tier=db" from "member2". 1/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				if si.Labels["tier"] != "web" || si.Labels[names.ManagedByLabel] != names.ManagedByValue {
					t.Errorf("labels %v", si.Labels)
				}
			},
		},
		{
			name: "annotations", reasons: []string{"AnnotationsConflict"}, disagreeing: []string{"member3"},
			mut: func(id string, _ *corev1.Service, e *mcsv1beta1.ServiceExport) {
				if id == "member3" {
					e.Spec.ExportedAnnotations = map[string]string{"a": "b"}
				}
			},
			message: `Conflicting exported annotations. Using "<none>" from oldest service export in "member1". Not using "a=b" from "member3". 1/3 clusters disagree.`,
			check: func(t *testing.T, si *mcsv1beta1.ServiceImport) {
				if _, ok := si.Annotations["a"]; ok || si.Annotations[names.DerivedServiceAnnotation] != "derived-serve" {
					t.Errorf("annotations %v", si.Annotations)
				}
			},
		},
		{
			name: "several at once", reasons: []string{"PortConflict", "TypeConflict"}, disagreeing: []string{"member2"},
			mut: func(id string, s *corev1.Service, _ *mcsv1beta1.ServiceExport) {
				if id == "member2" {
					s.Spec.ClusterIP = corev1.ClusterIPNone
					s.Spec.Ports[0].Port = 81
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(threeMembers(tc.mut))
			var got []string
			for _, c := range d.Conflicts {
				got = append(got, c.Reason)
				if c.Winner != "member1" || c.Total != 3 || c.Namespace != "demo" || c.Service != "serve" {
					t.Errorf("conflict %+v: want winner member1, total 3, demo/serve", c)
				}
			}
			if !reflect.DeepEqual(got, tc.reasons) {
				t.Fatalf("reasons %v, want %v", got, tc.reasons)
			}
			if len(tc.reasons) > 0 {
				if !reflect.DeepEqual(d.Conflicts[0].Disagreeing, tc.disagreeing) {
					t.Errorf("disagreeing %v, want %v", d.Conflicts[0].Disagreeing, tc.disagreeing)
				}
				if tc.message != "" && d.Conflicts[0].Message != tc.message {
					t.Errorf("message\n got %q\nwant %q", d.Conflicts[0].Message, tc.message)
				}
			}
			for _, id := range []string{"member1", "member2", "member3"} {
				conds := d.Clusters[id].ExportConditions[nn("demo", "serve")]
				c := findCond(conds, mcsv1beta1.ServiceExportConditionConflict)
				v := findCond(conds, mcsv1beta1.ServiceExportConditionValid)
				if c == nil || v == nil || v.Status != metav1.ConditionTrue {
					t.Fatalf("%s: conditions %+v", id, conds)
				}
				if len(tc.reasons) == 0 {
					if c.Status != metav1.ConditionFalse || c.Reason != "NoConflicts" {
						t.Errorf("%s: conflict condition %+v, want False/NoConflicts", id, c)
					}
					continue
				}
				if c.Status != metav1.ConditionTrue || c.Reason != strings.Join(tc.reasons, ",") {
					t.Errorf("%s: conflict condition %s/%s, want True/%s", id, c.Status, c.Reason, strings.Join(tc.reasons, ","))
				}
				for _, conf := range d.Conflicts {
					if !strings.Contains(c.Message, conf.Message) {
						t.Errorf("%s: condition message %q lacks %q", id, c.Message, conf.Message)
					}
				}
			}
			if tc.check != nil {
				for id, cd := range d.Clusters {
					si := findImport(cd, "demo", "serve")
					if si == nil {
						t.Fatalf("%s: no import", id)
					}
					tc.check(t, si)
				}
			}
		})
	}
}

func TestWinnerOrder(t *testing.T) {
	build := func(ids []string, created []int, headless string) Observed {
		obs := Observed{Now: now}
		for i, id := range ids {
			svc := mkService("demo", "serve")
			if id == headless {
				svc.Spec.ClusterIP = corev1.ClusterIPNone
			}
			obs.Clusters = append(obs.Clusters, member(id, svc, mkExport("demo", "serve", created[i])))
		}
		return obs
	}
	t.Run("tie broken by cluster ID", func(t *testing.T) {
		d := Compute(build([]string{"b", "a"}, []int{5, 5}, "b"))
		if len(d.Conflicts) != 1 || d.Conflicts[0].Winner != "a" || !reflect.DeepEqual(d.Conflicts[0].Disagreeing, []string{"b"}) {
			t.Fatalf("conflicts %+v, want winner a, disagreeing b", d.Conflicts)
		}
		if si := findImport(d.Clusters["b"], "demo", "serve"); si.Spec.Type != mcsv1beta1.ClusterSetIP {
			t.Errorf("type %s, want a's ClusterSetIP", si.Spec.Type)
		}
	})
	t.Run("older beats smaller ID", func(t *testing.T) {
		d := Compute(build([]string{"a", "z"}, []int{5, 1}, "z"))
		if len(d.Conflicts) != 1 || d.Conflicts[0].Winner != "z" {
			t.Fatalf("conflicts %+v, want winner z", d.Conflicts)
		}
		want := `Conflicting type. Using "Headless" from oldest service export in "z". Not using "ClusterSetIP" from "a". 1/2 clusters disagree.`
		if d.Conflicts[0].Message != want {
			t.Errorf("message %q, want %q", d.Conflicts[0].Message, want)
		}
	})
}

func TestImports(t *testing.T) {
	t.Run("every cluster with the namespace imports, with its own derived IP", func(t *testing.T) {
		derived1 := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "derived-serve", UID: "svc-uid-1",
			Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "serve"}},
			Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1"}}}
		imp1 := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "imp-uid-1",
			Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}}}
		svc := mkService("demo", "serve")
		svc.Labels = map[string]string{"own": "label"}
		obs := Observed{Now: now, Clusters: []ObservedCluster{
			member("member1", svc, mkExport("demo", "serve", 0), mkSlice("demo", "serve", "serve-abc", "10.1.0.1"), derived1, imp1),
			member("member2"),
			{ID: "member3", Reachable: true, Objects: snapshot.Objects{Namespaces: []string{"other"}}},
		}}
		d := Compute(obs)
		if len(d.Clusters["member3"].ServiceImports) != 0 {
			t.Errorf("member3 lacks the namespace but gets %d imports", len(d.Clusters["member3"].ServiceImports))
		}
		si1, si2 := findImport(d.Clusters["member1"], "demo", "serve"), findImport(d.Clusters["member2"], "demo", "serve")
		if si1 == nil || si2 == nil {
			t.Fatal("missing import in member1 or member2")
		}
		if !reflect.DeepEqual(si1.Spec.IPs, []string{"10.0.0.1"}) || len(si2.Spec.IPs) != 0 {
			t.Errorf("ips member1 %v member2 %v, want [10.0.0.1] and none", si1.Spec.IPs, si2.Spec.IPs)
		}
		if _, ok := si1.Labels["own"]; ok {
			t.Errorf("service's own label copied: %v", si1.Labels)
		}
		if !reflect.DeepEqual(si1.Status.Clusters, []mcsv1beta1.ClusterStatus{{Cluster: "member1"}}) {
			t.Errorf("status.clusters %v", si1.Status.Clusters)
		}
		ds1, ds2 := findService(d.Clusters["member1"], "demo", "derived-serve"), findService(d.Clusters["member2"], "demo", "derived-serve")
		if len(ds1.OwnerReferences) != 1 || ds1.OwnerReferences[0].UID != "imp-uid-1" || len(ds2.OwnerReferences) != 0 {
			t.Errorf("owner refs %v / %v: want only member1's, to the observed import", ds1.OwnerReferences, ds2.OwnerReferences)
		}
		if ds1.Spec.Selector != nil || ds1.Spec.ClusterIP != "" || ds1.Spec.Ports[0].TargetPort.IntVal != 80 ||
			ds1.Labels[mcsv1beta1.LabelServiceName] != "serve" || ds1.Labels[names.ManagedByLabel] != names.ManagedByValue {
			t.Errorf("derived service %+v", ds1)
		}
		for _, id := range []string{"member1", "member2"} {
			sl := d.Clusters[id].EndpointSlices
			if len(sl) != 1 {
				t.Fatalf("%s: %d slices, want 1", id, len(sl))
			}
			s := sl[0]
			wantLabels := map[string]string{
				mcsv1beta1.LabelServiceName: "serve", mcsv1beta1.LabelSourceCluster: "member1",
				"kubernetes.io/service-name": "derived-serve", names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue,
				names.ManagedByLabel: names.ManagedByValue,
			}
			if !reflect.DeepEqual(s.Labels, wantLabels) || len(s.Name) > 63 || s.Name != names.EndpointSliceName("serve", "member1", "serve-abc") {
				t.Errorf("%s: slice %s labels %v", id, s.Name, s.Labels)
			}
			e := s.Endpoints[0]
			if e.Addresses[0] != "10.1.0.1" || e.NodeName != nil || e.TargetRef != nil || *e.Zone != "z1" || !*e.Conditions.Ready {
				t.Errorf("%s: endpoint %+v", id, e)
			}
		}
		if o := d.Clusters["member1"].EndpointSlices[0].OwnerReferences; len(o) != 1 || o[0].UID != "svc-uid-1" {
			t.Errorf("member1 slice owner %v, want the derived service", o)
		}
	})

	t.Run("headless has no IPs", func(t *testing.T) {
		svc := mkService("demo", "serve")
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		derived := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "derived-serve",
			Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}},
			Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.9", ClusterIPs: []string{"10.0.0.9"}}} // stale, pre-switch
		d := Compute(Observed{Now: now, Clusters: []ObservedCluster{member("m1", svc, mkExport("demo", "serve", 0), derived)}})
		si := findImport(d.Clusters["m1"], "demo", "serve")
		if si.Spec.Type != mcsv1beta1.Headless || len(si.Spec.IPs) != 0 {
			t.Errorf("import type %s ips %v, want Headless and none", si.Spec.Type, si.Spec.IPs)
		}
		if ds := findService(d.Clusters["m1"], "demo", "derived-serve"); ds.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("derived clusterIP %q, want None", ds.Spec.ClusterIP)
		}
	})
}

func TestInvalidExports(t *testing.T) {
	ext := mkService("demo", "serve")
	ext.Spec.Type = corev1.ServiceTypeExternalName
	managed := mkService("demo", "serve")
	managed.Labels = map[string]string{names.ManagedByLabel: names.ManagedByValue}
	cases := []struct {
		name   string
		svc    *corev1.Service
		reason mcsv1beta1.ServiceExportConditionReason
	}{
		{"no service", nil, mcsv1beta1.ServiceExportReasonNoService},
		{"external name", ext, mcsv1beta1.ServiceExportReasonInvalidServiceType},
		{"managed (derived) service is no source", managed, mcsv1beta1.ServiceExportReasonNoService},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := []any{mkExport("demo", "serve", 0), mkSlice("demo", "serve", "s1", "10.1.0.1")}
			if tc.svc != nil {
				objs = append(objs, tc.svc)
			}
			d := Compute(Observed{Now: now, Clusters: []ObservedCluster{member("m1", objs...), member("m2")}})
			conds := d.Clusters["m1"].ExportConditions[nn("demo", "serve")]
			if len(conds) != 1 || conds[0].Type != "Valid" || conds[0].Status != metav1.ConditionFalse ||
				conds[0].Reason != string(tc.reason) || conds[0].ObservedGeneration != 1 {
				t.Fatalf("conditions %+v, want only Valid=False/%s", conds, tc.reason)
			}
			for id, cd := range d.Clusters {
				if len(cd.ServiceImports)+len(cd.Services)+len(cd.EndpointSlices) != 0 {
					t.Errorf("%s: something desired for an invalid export: %+v", id, cd)
				}
			}
		})
	}

	t.Run("invalid export beside a valid one is not a constituent", func(t *testing.T) {
		d := Compute(Observed{Now: now, Clusters: []ObservedCluster{
			member("m1", mkExport("demo", "serve", 0), ext),
			member("m2", mkExport("demo", "serve", 1), mkService("demo", "serve")),
		}})
		si := findImport(d.Clusters["m1"], "demo", "serve")
		if si == nil || !reflect.DeepEqual(si.Status.Clusters, []mcsv1beta1.ClusterStatus{{Cluster: "m2"}}) {
			t.Fatalf("import %+v, want one listing only m2", si)
		}
		if len(d.Conflicts) != 0 {
			t.Errorf("conflicts %+v: an invalid export must not take part", d.Conflicts)
		}
	})
}

func TestReady(t *testing.T) {
	managedImp := func() *mcsv1beta1.ServiceImport {
		return &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve",
			Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}}}
	}
	ready := func(obs Observed) *metav1.Condition {
		return findCond(Compute(obs).Clusters["m1"].ExportConditions[nn("demo", "serve")], mcsv1beta1.ServiceExportConditionReady)
	}
	base := func(m2 ...any) Observed {
		return Observed{Now: now, Clusters: []ObservedCluster{
			member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), managedImp()),
			member("m2", m2...),
			{ID: "m3", Objects: snapshot.Objects{Namespaces: []string{"demo"}}}, // unreachable: does not count
		}}
	}
	if c := ready(base()); c.Status != metav1.ConditionFalse || c.Reason != "Pending" || !strings.Contains(c.Message, `"m2"`) {
		t.Errorf("m2 has no import yet: %+v, want Pending naming m2", c)
	}
	if c := ready(base(managedImp())); c.Status != metav1.ConditionTrue || c.Reason != "Exported" {
		t.Errorf("all reachable have the import: %+v, want True/Exported", c)
	}
	user := managedImp()
	user.Labels = nil
	if c := ready(base(user)); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "not managed") {
		t.Errorf("user-made import in m2: %+v, want Pending", c)
	}
}

func TestOwnershipSkips(t *testing.T) {
	userImp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve"}}
	userSvc := mkService("demo", "derived-serve")
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "s1", "10.1.0.1")),
		member("m2", userImp),
		member("m3", userSvc),
	}}
	d := Compute(obs)
	for id, kind := range map[string]string{"m2": snapshot.KindServiceImport, "m3": snapshot.KindService} {
		cd := d.Clusters[id]
		if len(cd.ServiceImports)+len(cd.Services)+len(cd.EndpointSlices) != 0 {
			t.Errorf("%s: objects desired despite a foreign %s", id, kind)
		}
		if len(cd.Skipped) != 1 || cd.Skipped[0].Kind != kind || cd.Skipped[0].Namespace != "demo" {
			t.Errorf("%s: skipped %+v, want one %s", id, cd.Skipped, kind)
		}
	}
	if len(d.Clusters["m1"].ServiceImports) != 1 {
		t.Errorf("m1 should still import")
	}
	for _, a := range Plan(obs, d) {
		if a.Cluster != "m1" {
			t.Errorf("action in a cluster where a foreign object blocks the import: %+v", a)
		}
	}
}

func TestSources(t *testing.T) {
	ours := mkSlice("demo", "serve", "copy", "10.9.9.9")
	ours.Labels[names.EndpointSliceManagedByLabel] = names.EndpointSliceManagedByValue
	ours.Labels[mcsv1beta1.LabelSourceCluster] = "m2"
	other := mkSlice("demo", "else", "else-1", "10.8.8.8")
	otherNS := mkSlice("other", "serve", "x-1", "10.7.7.7")
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "s1", "10.1.0.1"), ours, other, otherNS),
		{ID: "m2", Reachable: false, Objects: snapshot.Objects{Namespaces: []string{"demo"}, Services: []*corev1.Service{mkService("demo", "serve")},
			ServiceExports: []*mcsv1beta1.ServiceExport{mkExport("demo", "serve", 1)},
			EndpointSlices: []*discoveryv1.EndpointSlice{mkSlice("demo", "serve", "s2", "10.2.0.1")}}},
	}}
	d := Compute(obs)
	if _, ok := d.Clusters["m2"]; ok {
		t.Error("unreachable cluster has desired state")
	}
	var got []string
	for _, s := range d.Clusters["m1"].EndpointSlices {
		got = append(got, s.Labels[mcsv1beta1.LabelSourceCluster]+"/"+s.Endpoints[0].Addresses[0])
	}
	if want := []string{"m1/10.1.0.1", "m2/10.2.0.1"}; !reflect.DeepEqual(got, sortedCopy(got)) || !reflect.DeepEqual(sortedCopy(got), want) {
		t.Errorf("slice sources %v, want %v (own copies and other services ignored, unreachable kept)", got, want)
	}
	si := findImport(d.Clusters["m1"], "demo", "serve")
	if !reflect.DeepEqual(si.Status.Clusters, []mcsv1beta1.ClusterStatus{{Cluster: "m1"}, {Cluster: "m2"}}) {
		t.Errorf("status.clusters %v, want m1 and unreachable m2", si.Status.Clusters)
	}
	for _, a := range Plan(obs, d) {
		if a.Cluster == "m2" {
			t.Errorf("write to unreachable cluster: %+v", a)
		}
	}
}

func TestTerminatingExportIsGone(t *testing.T) {
	exp := mkExport("demo", "serve", 0)
	exp.DeletionTimestamp = &now
	d := Compute(Observed{Now: now, Clusters: []ObservedCluster{member("m1", exp, mkService("demo", "serve"))}})
	if cd := d.Clusters["m1"]; len(cd.ServiceImports) != 0 || len(cd.ExportConditions) != 0 {
		t.Errorf("terminating export still imported: %+v", cd)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestEndpointSliceName(t *testing.T) {
	long := strings.Repeat("s", 63)
	seen := map[string]bool{}
	for _, svc := range []string{"serve", long} {
		for _, cl := range []string{"member1", strings.Repeat("c", 63)} {
			for _, sl := range []string{"a", "b"} {
				n := names.EndpointSliceName(svc, cl, sl)
				if len(n) > 63 || strings.Contains(n, "--") || seen[n] {
					t.Errorf("EndpointSliceName(%q, %q, %q) = %q: too long, '--' or duplicate", svc, cl, sl, n)
				}
				seen[n] = true
			}
		}
	}
	if n := names.EndpointSliceName("serve", "member1", "x"); !strings.HasPrefix(n, "derived-serve-member1-") {
		t.Errorf("short name %q should stay readable", n)
	}
}

// A cluster deciding for itself alone (Observed.For) gets what deciding for all gives it, and no
// other cluster's imports or copies are built for it.
func TestComputeForOneCluster(t *testing.T) {
	obs := twoExporters()
	all := Compute(obs)
	for _, id := range []string{"m1", "m2", "m3"} {
		one := obs
		one.For = id
		d := Compute(one)
		if len(d.Clusters) != 1 || !reflect.DeepEqual(d.Clusters[id], all.Clusters[id]) {
			t.Errorf("%s: deciding for it alone wants %d clusters, or other than deciding for all", id, len(d.Clusters))
		}
		if n := len(d.Clusters[id].EndpointSlices); n != 2 {
			t.Errorf("%s: %d copies wanted, want one of each exporter's slice", id, n)
		}
	}
}
