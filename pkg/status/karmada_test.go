package status

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func obj(apiVersion, kind, ns, name string, spec map[string]any, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"namespace": ns, "name": name, "creationTimestamp": "2025-01-01T00:00:00Z",
			"labels": map[string]any{"app.kubernetes.io/managed-by": "kubectl-mcs", "tier": "web"}},
		"spec": spec,
	}}
	if len(conds) > 0 {
		var l []any
		for _, c := range conds {
			l = append(l, c)
		}
		u.Object["status"] = map[string]any{"conditions": l}
	}
	return u
}

func cond(t, status, reason, msg string) map[string]any {
	return map[string]any{"type": t, "status": status, "reason": reason, "message": msg, "lastTransitionTime": "2025-01-01T00:10:00Z"}
}

func mcs(name string, conds ...map[string]any) *unstructured.Unstructured {
	return obj("networking.karmada.io/v1alpha1", "MultiClusterService", "demo", name, map[string]any{
		"types":            []any{"CrossCluster"},
		"ports":            []any{map[string]any{"name": "http", "port": int64(80)}},
		"providerClusters": []any{map[string]any{"name": "member1"}},
		"consumerClusters": []any{map[string]any{"name": "member2"}, map[string]any{"name": "member3"}},
	}, conds...)
}

func policy(ns, name string, clusters []any, selectors ...map[string]any) *unstructured.Unstructured {
	var sel []any
	for _, s := range selectors {
		sel = append(sel, s)
	}
	kind := "PropagationPolicy"
	if ns == "" {
		kind = "ClusterPropagationPolicy"
	}
	u := obj("policy.karmada.io/v1alpha1", kind, ns, name, map[string]any{
		"resourceSelectors": sel,
		"placement":         map[string]any{"clusterAffinity": map[string]any{"clusterNames": clusters}},
	})
	if ns == "" {
		unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
	}
	return u
}

func karmadaInput() snapshot.Karmada {
	return snapshot.Karmada{
		ControlPlane: "karmada-apiserver",
		MultiClusterServices: []*unstructured.Unstructured{
			mcs("ok", cond("ServiceApplied", "True", "ServiceAppliedSucceed", "applied"), cond("EndpointSliceDispatched", "True", "Dispatched", "ok")),
			mcs("broken", cond("ServiceApplied", "True", "ServiceAppliedSucceed", "applied"), cond("EndpointSliceDispatched", "False", "DispatchFailed", "member3 is not ready")),
			mcs("fresh"),
			mcs("nosvc", cond("ServiceApplied", "True", "ServiceAppliedSucceed", "applied")),
		},
		ServiceExports: []*unstructured.Unstructured{
			obj("multicluster.x-k8s.io/v1alpha1", "ServiceExport", "demo", "serve", nil),
			obj("multicluster.x-k8s.io/v1alpha1", "ServiceExport", "demo", "lonely", nil),
		},
		ServiceImports: []*unstructured.Unstructured{
			obj("multicluster.x-k8s.io/v1alpha1", "ServiceImport", "demo", "serve", map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(80)}}}),
			obj("multicluster.x-k8s.io/v1alpha1", "ServiceImport", "demo", "orphan", map[string]any{"type": "Headless"}),
		},
		Policies: []*unstructured.Unstructured{
			policy("demo", "serve-export-policy", []any{"member1"}, map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport", "name": "serve"}),
			// Selected by label, in another version of the group: still the same object.
			policy("demo", "imports", []any{"member2"}, map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
				"labelSelector": map[string]any{"matchLabels": map[string]any{"tier": "web"}}}),
			policy("", "everywhere", []any{"member3"}, map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport", "namespace": "demo", "name": "serve"}),
			policy("other", "elsewhere", []any{"member9"}, map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport", "name": "lonely"}),
		},
		Services: []key{{Namespace: "demo", Name: "ok"}, {Namespace: "demo", Name: "broken"}, {Namespace: "demo", Name: "fresh"}, {Namespace: "demo", Name: "serve"}},
	}
}

func TestBuildKarmada(t *testing.T) {
	l := BuildKarmada(karmadaInput())
	if l.APIVersion != APIVersion || l.Kind != KindKarmada || l.ControlPlane != "karmada-apiserver" {
		t.Fatalf("header %+v %s", l.TypeMeta, l.ControlPlane)
	}
	health := map[string]Health{}
	for _, m := range l.MultiClusterServices {
		health[m.Name] = m.Health
	}
	want := map[string]Health{"ok": Healthy, "broken": Degraded, "fresh": Unknown, "nosvc": Degraded}
	if !reflect.DeepEqual(health, want) {
		t.Errorf("health %v, want %v", health, want)
	}
	var broken KarmadaMCSStatus
	for _, m := range l.MultiClusterServices {
		if m.Name == "broken" {
			broken = m
		}
	}
	if !reflect.DeepEqual(broken.ProviderClusters, []string{"member1"}) || !reflect.DeepEqual(broken.ConsumerClusters, []string{"member2", "member3"}) ||
		!reflect.DeepEqual(broken.Types, []string{"CrossCluster"}) || len(broken.Ports) != 1 || broken.Ports[0].Port != 80 || !broken.Managed {
		t.Errorf("broken %+v", broken)
	}
	if len(broken.Problems) != 1 || !strings.Contains(broken.Problems[0], "EndpointSliceDispatched is False (DispatchFailed): member3 is not ready") {
		t.Errorf("problems %v", broken.Problems)
	}
	if names := []string{l.MultiClusterServices[0].Name, l.MultiClusterServices[3].Name}; names[0] != "broken" || names[1] != "ok" {
		t.Errorf("not sorted: %v", names)
	}

	se := l.ServiceExports
	if len(se) != 2 || se[0].Name != "lonely" || se[0].Health != Degraded || len(se[0].Policies) != 0 {
		t.Errorf("a policy of another namespace places lonely: %+v", se[0])
	}
	if se[1].Health != Healthy || !reflect.DeepEqual(se[1].PlacedIn, []string{"member1"}) || !reflect.DeepEqual(se[1].Policies, []string{"serve-export-policy"}) {
		t.Errorf("serve export %+v", se[1])
	}
	si := l.ServiceImports
	if si[0].Name != "orphan" || si[0].Health != Degraded || !strings.Contains(strings.Join(si[0].Problems, " "), "No ServiceExport") {
		t.Errorf("orphan import %+v", si[0])
	}
	if si[1].Health != Healthy || !reflect.DeepEqual(si[1].PlacedIn, []string{"member2", "member3"}) ||
		!reflect.DeepEqual(si[1].Policies, []string{"clusterpropagationpolicy/everywhere", "imports"}) || si[1].Type != "ClusterSetIP" {
		t.Errorf("serve import %+v", si[1])
	}
	if !reflect.DeepEqual(si[1].Ports, []Port{{Protocol: "TCP", Port: 80}}) {
		t.Errorf("serve import ports %+v, want 80/TCP (protocol defaulted)", si[1].Ports)
	}
}

func TestPrintKarmada(t *testing.T) {
	var b bytes.Buffer
	if err := PrintKarmada(&b, BuildKarmada(karmadaInput()), PrintOptions{Now: now, Wide: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"NAMESPACE NAME STATUS TYPES AGE PORTS PROVIDERS CONSUMERS SERVICE-APPLIED ENDPOINTSLICE-DISPATCHED",
		"demo broken Degraded CrossCluster 90m http:80 member1 member2,member3 True False(DispatchFailed)",
		"demo ok Healthy CrossCluster 90m http:80 member1 member2,member3 True True",
		"demo fresh Unknown CrossCluster 90m http:80 member1 member2,member3 - -",
		"KIND NAMESPACE NAME STATUS AGE TYPE PORTS PLACED-IN POLICIES",
		"ServiceExport demo serve Healthy 90m - - member1 serve-export-policy",
		"ServiceImport demo serve Healthy 90m ClusterSetIP 80/TCP member2,member3 clusterpropagationpolicy/everywhere,imports",
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Join(strings.Fields(line), " ") == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
	b.Reset()
	l := BuildKarmada(karmadaInput())
	l.MultiClusterServices = l.MultiClusterServices[:1]
	if err := DescribeKarmada(&b, l, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MultiClusterService: demo/broken\n", "Consumers:           member2, member3\n",
		"  EndpointSliceDispatched   False    DispatchFailed          80m\n    member3 is not ready\n",
		"ServiceImport:       demo/orphan (multicluster.x-k8s.io/v1alpha1)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, b.String())
		}
	}
}

func TestKarmadaDeprecatedFields(t *testing.T) {
	u := obj("networking.karmada.io/v1alpha1", "MultiClusterService", "demo", "old", map[string]any{
		"types":                    []any{"CrossCluster"},
		"serviceProvisionClusters": []any{"member1"},
		"range":                    map[string]any{"clusterNames": []any{"member2"}},
	})
	m := BuildKarmada(snapshot.Karmada{MultiClusterServices: []*unstructured.Unstructured{u}}).MultiClusterServices[0]
	if !reflect.DeepEqual(m.ProviderClusters, []string{"member1"}) || !reflect.DeepEqual(m.ConsumerClusters, []string{"member2"}) {
		t.Errorf("providers %v consumers %v", m.ProviderClusters, m.ConsumerClusters)
	}
}
