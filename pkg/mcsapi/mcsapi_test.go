package mcsapi

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

func TestServiceExportBuilder(t *testing.T) {
	se := ServiceExport(V1alpha1, "demo", "serve", map[string]string{"tier": "web"}, nil)
	want := map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1",
		"kind":       "ServiceExport",
		"metadata": map[string]any{"name": "serve", "namespace": "demo",
			"labels": map[string]any{names.ManagedByLabel: names.ManagedByValue}},
		"spec": map[string]any{"exportedLabels": map[string]any{"tier": "web"}},
	}
	if !reflect.DeepEqual(se.Object, want) {
		t.Errorf("ServiceExport:\n got %v\nwant %v", se.Object, want)
	}
	// Nothing asked for: an empty spec, no status, no creationTimestamp (strict validation on
	// v0.1.0-era CRDs refuses what their schema lacks).
	bare := ServiceExport(V1beta1, "demo", "serve", nil, nil)
	if _, ok := bare.Object["status"]; ok {
		t.Errorf("status sent: %v", bare.Object)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(bare.Object, "metadata", "creationTimestamp"); ok {
		t.Errorf("creationTimestamp sent: %v", bare.Object)
	}
	if spec, _, _ := unstructured.NestedMap(bare.Object, "spec"); len(spec) != 0 || bare.GetAPIVersion() != "multicluster.x-k8s.io/v1beta1" {
		t.Errorf("bare export: %v", bare.Object)
	}
}

func TestServiceImportFromService(t *testing.T) {
	timeout := int32(60)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", Labels: map[string]string{"app": "serve"}},
		Spec: corev1.ServiceSpec{
			ClusterIP:             "10.96.0.10",
			Ports:                 []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}},
		},
	}
	si := ServiceImportFromService(V1beta1, svc)
	if si.GetKind() != "ServiceImport" || si.GetNamespace() != "demo" || si.GetName() != "serve" || !names.IsManaged(si.GetLabels()) || si.GetLabels()["app"] != "" {
		t.Errorf("metadata: %v", si.Object["metadata"])
	}
	typ, _, _ := unstructured.NestedString(si.Object, "spec", "type")
	affinity, _, _ := unstructured.NestedString(si.Object, "spec", "sessionAffinity")
	secs, _, _ := unstructured.NestedInt64(si.Object, "spec", "sessionAffinityConfig", "clientIP", "timeoutSeconds")
	ports, _, _ := unstructured.NestedSlice(si.Object, "spec", "ports")
	if typ != "ClusterSetIP" || affinity != "ClientIP" || secs != 60 || len(ports) != 2 {
		t.Fatalf("spec: %v", si.Object["spec"])
	}
	if p := ports[0].(map[string]any); p["protocol"] != "TCP" || p["port"] != int64(80) || p["name"] != "http" {
		t.Errorf("port defaulted to TCP: %v", p)
	}
	if p := ports[1].(map[string]any); p["protocol"] != "UDP" {
		t.Errorf("UDP kept: %v", p)
	}

	svc.Spec.ClusterIP = corev1.ClusterIPNone
	typ, _, _ = unstructured.NestedString(ServiceImportFromService(V1alpha1, svc).Object, "spec", "type")
	if typ != "Headless" {
		t.Errorf("headless Service: type %q", typ)
	}
}

func TestParseKeyValues(t *testing.T) {
	m, err := ParseKeyValues("exported-labels", []string{"tier=web", "empty=", "a=b=c"})
	if err != nil || !reflect.DeepEqual(m, map[string]string{"tier": "web", "empty": "", "a": "b=c"}) {
		t.Errorf("%v %v", m, err)
	}
	if m, err := ParseKeyValues("exported-labels", nil); m != nil || err != nil {
		t.Errorf("none: %v %v", m, err)
	}
	for _, bad := range []string{"tier", "=web"} {
		if _, err := ParseKeyValues("exported-annotations", []string{bad}); err == nil || err.Error() != `--exported-annotations: "`+bad+`" is not KEY=VALUE` {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// served is a fake discovery serving the mcs-api resources given per version.
func served(resources map[string][]string) *discoveryfake.FakeDiscovery {
	d := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	for v, rs := range resources {
		l := &metav1.APIResourceList{GroupVersion: Group + "/" + v}
		for _, r := range rs {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: r, Namespaced: true})
		}
		d.Resources = append(d.Resources, l)
	}
	return d
}

func TestServedVersion(t *testing.T) {
	both := []string{ServiceExports, ServiceImports}
	for _, tc := range []struct {
		name      string
		resources map[string][]string
		want      string
	}{
		{"v1beta1 preferred", map[string][]string{V1alpha1: both, V1beta1: both}, V1beta1},
		{"v1alpha1 only (Karmada's CRDs)", map[string][]string{V1alpha1: both}, V1alpha1},
		{"v1beta1 without ServiceImports", map[string][]string{V1beta1: {ServiceExports}, V1alpha1: both}, V1alpha1},
		{"none", nil, ""},
		{"half of each", map[string][]string{V1beta1: {ServiceExports}, V1alpha1: {ServiceImports}}, ""},
	} {
		got, err := ServedVersion(served(tc.resources))
		if got != tc.want || (tc.want == "") != errors.As(err, &ErrNotInstalled{}) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}

	// Discovery that fails otherwise than NotFound is an error, not "not installed".
	d := served(map[string][]string{V1beta1: both})
	d.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if v, err := ServedVersion(d); err == nil || errors.As(err, &ErrNotInstalled{}) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("failing discovery: %q, %v", v, err)
	}
}

func TestEmbeddedCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 {
		t.Fatalf("%d CRDs", len(crds))
	}
	for i, plural := range []string{ServiceExports, ServiceImports} {
		c := crds[i]
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		got, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		if c.GetKind() != "CustomResourceDefinition" || c.GetName() != plural+"."+Group || group != Group || got != plural {
			t.Errorf("CRD %d: %s %s group %q plural %q", i, c.GetKind(), c.GetName(), group, got)
		}
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		servedVersions := map[string]bool{}
		for _, v := range versions {
			m := v.(map[string]any)
			if m["served"] == true {
				servedVersions[m["name"].(string)] = true
			}
		}
		if !servedVersions[V1beta1] {
			t.Errorf("%s: v1beta1 not served (%v): init would install CRDs sync does not prefer", c.GetName(), servedVersions)
		}
	}
	// Each call decodes afresh: init labels its copies without touching the next caller's.
	again, _ := CRDs()
	crds[0].SetLabels(map[string]string{"x": "y"})
	if again[0].GetLabels()["x"] != "" {
		t.Error("CRDs() shares objects between calls")
	}
}
