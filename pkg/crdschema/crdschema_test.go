package crdschema_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// v010 reads a CRD of mcs-api v0.1.0 (the generation Karmada bundles) from testdata.
func v010(t *testing.T, resource string) *unstructured.Unstructured {
	t.Helper()
	return fromYAML(t, filepath.Join("testdata", "v0.1.0-"+resource+".yaml"))
}

func fromYAML(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// embedded returns the plugin's own (mcs-api v0.5) CRD of a resource.
func embedded(t *testing.T, resource string) *unstructured.Unstructured {
	t.Helper()
	crds, err := mcsapi.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.GetName() == resource+"."+mcsapi.Group {
			return c
		}
	}
	t.Fatalf("no embedded CRD for %s", resource)
	return nil
}

func mustSchema(t *testing.T, crd *unstructured.Unstructured, version string) *crdschema.Schema {
	t.Helper()
	s, err := crdschema.FromCRD(crd, version)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fullImport is a v1beta1 ServiceImport with every field the newest schema declares, and more.
func fullImport(version string) map[string]any {
	return map[string]any{
		"apiVersion": mcsapi.Group + "/" + version, "kind": "ServiceImport",
		"metadata": map[string]any{"name": "serve", "namespace": "demo", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{
			"type":                  "ClusterSetIP",
			"ips":                   []any{"10.0.0.1", "fd00::1"},
			"ipFamilies":            []any{"IPv4", "IPv6"},
			"internalTrafficPolicy": "Local",
			"trafficDistribution":   "PreferClose",
			"sessionAffinity":       "ClientIP",
			"sessionAffinityConfig": map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(30)}},
			"ports":                 []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP", "appProtocol": "http"}},
		},
		"status": map[string]any{"clusters": []any{map[string]any{"cluster": "member1"}}},
	}
}

func TestV010ServiceExport(t *testing.T) {
	s := mustSchema(t, v010(t, "serviceexports"), "v1alpha1")
	for path, want := range map[string]bool{
		"spec": false, "spec.exportedLabels": false, "status": true, "status.conditions.type": true,
		"status.conditions.observedGeneration": false, "apiVersion": true, "metadata": true, "metadata.labels": true,
	} {
		if got := s.Has(strings.Split(path, ".")...); got != want {
			t.Errorf("Has(%s) = %v, want %v", path, got, want)
		}
	}
	for _, labels := range []map[string]string{nil, {"tier": "web"}} {
		se := mcsapi.ServiceExport(mcsapi.V1alpha1, "demo", "serve", labels, nil)
		removed := s.Prune(se.Object)
		if !reflect.DeepEqual(removed, []string{"spec"}) {
			t.Errorf("labels %v: removed %v, want [spec]", labels, removed)
		}
		if _, ok := se.Object["spec"]; ok {
			t.Errorf("spec kept: %v", se.Object)
		}
		if se.GetName() != "serve" || se.GetLabels()["app.kubernetes.io/managed-by"] != "kubectl-mcs" || se.GetKind() != "ServiceExport" {
			t.Errorf("apiVersion/kind/metadata touched: %v", se.Object)
		}
	}
}

func TestV010ServiceImport(t *testing.T) {
	s := mustSchema(t, v010(t, "serviceimports"), "v1alpha1")
	for path, want := range map[string]bool{
		"spec.ips": true, "spec.ipFamilies": false, "spec.internalTrafficPolicy": false, "spec.trafficDistribution": false,
		"spec.ports.appProtocol": true, "spec.ports.name": true, "spec.sessionAffinityConfig.clientIP.timeoutSeconds": true,
		"status.clusters.cluster": true, "status.conditions": false,
	} {
		if got := s.Has(strings.Split(path, ".")...); got != want {
			t.Errorf("Has(%s) = %v, want %v", path, got, want)
		}
	}
	if got := s.MaxItems("spec", "ips"); got != 1 {
		t.Errorf("MaxItems(spec.ips) = %d, want 1", got)
	}
	if got := s.MaxItems("spec", "ports"); got != 0 {
		t.Errorf("MaxItems(spec.ports) = %d, want 0", got)
	}
	obj := fullImport(mcsapi.V1alpha1)
	obj["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["bogus"] = "x"
	removed := s.Prune(obj)
	want := []string{"spec.internalTrafficPolicy", "spec.ipFamilies", "spec.ips", "spec.ports.bogus", "spec.trafficDistribution"}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	spec := obj["spec"].(map[string]any)
	if ips := spec["ips"].([]any); len(ips) != 1 || ips[0] != "10.0.0.1" {
		t.Errorf("ips = %v, want the first one only", ips)
	}
	if spec["type"] != "ClusterSetIP" || spec["sessionAffinity"] != "ClientIP" || spec["ports"].([]any)[0].(map[string]any)["appProtocol"] != "http" {
		t.Errorf("declared fields lost: %v", spec)
	}
	if !reflect.DeepEqual(obj["status"], fullImport(mcsapi.V1alpha1)["status"]) {
		t.Errorf("status changed: %v", obj["status"])
	}
	if again := s.Prune(obj); len(again) != 0 {
		t.Errorf("second Prune removed %v", again)
	}
}

// The plugin's own CRDs (mcs-api v0.5) declare everything the builders write, in both versions.
func TestEmbeddedCRDs(t *testing.T) {
	for _, v := range []string{mcsapi.V1beta1, mcsapi.V1alpha1} {
		se := mustSchema(t, embedded(t, mcsapi.ServiceExports), v)
		si := mustSchema(t, embedded(t, mcsapi.ServiceImports), v)
		if !se.Has("spec", "exportedLabels") || !se.Has("spec", "exportedAnnotations") {
			t.Errorf("%s: ServiceExport lacks exported labels/annotations", v)
		}
		if !si.Has("spec", "ipFamilies") || !si.Has("spec", "trafficDistribution") || si.MaxItems("spec", "ips") != 2 {
			t.Errorf("%s: ServiceImport schema unexpected", v)
		}
		u := mcsapi.ServiceExport(v, "demo", "serve", map[string]string{"a": "b"}, map[string]string{"c": "d"})
		if removed := se.Prune(u.Object); len(removed) != 0 {
			t.Errorf("%s: ServiceExport pruned %v", v, removed)
		}
		if removed := si.Prune(fullImport(v)); len(removed) != 0 {
			t.Errorf("%s: ServiceImport pruned %v", v, removed)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: "demo"}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}, SessionAffinity: corev1.ServiceAffinityNone}}
		if removed := si.Prune(mcsapi.ServiceImportFromService(v, svc).Object); len(removed) != 0 {
			t.Errorf("%s: ServiceImportFromService pruned %v", v, removed)
		}
	}
}

func TestFromCRDErrors(t *testing.T) {
	se := v010(t, "serviceexports")
	if _, err := crdschema.FromCRD(se, "v1beta1"); err == nil || !strings.Contains(err.Error(), "v1beta1 is not served") {
		t.Errorf("unknown version: %v", err)
	}
	off := se.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(off.Object, "spec", "versions")
	versions[0].(map[string]any)["served"] = false
	_ = unstructured.SetNestedSlice(off.Object, versions, "spec", "versions")
	if _, err := crdschema.FromCRD(off, "v1alpha1"); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("served: false: %v", err)
	}
	none := se.DeepCopy()
	versions, _, _ = unstructured.NestedSlice(none.Object, "spec", "versions")
	delete(versions[0].(map[string]any), "schema")
	_ = unstructured.SetNestedSlice(none.Object, versions, "spec", "versions")
	if _, err := crdschema.FromCRD(none, "v1alpha1"); err == nil || !strings.Contains(err.Error(), "has no schema") {
		t.Errorf("no schema: %v", err)
	}
}

func TestNilSchema(t *testing.T) {
	var s *crdschema.Schema
	if !s.Has("spec", "anything") || s.MaxItems("spec", "ips") != 0 {
		t.Error("a nil schema declares everything, unbounded")
	}
	obj := fullImport(mcsapi.V1beta1)
	if removed := s.Prune(obj); removed != nil || !reflect.DeepEqual(obj, fullImport(mcsapi.V1beta1)) {
		t.Errorf("nil schema pruned %v", removed)
	}
}

// Free-form parts of a schema are kept whole; typed maps are walked.
func TestPreserveUnknownAndAdditionalProperties(t *testing.T) {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: things.example.com}
spec:
  versions:
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
              anyMap: {type: object, additionalProperties: true}
              byName:
                type: object
                additionalProperties:
                  type: object
                  properties: {port: {type: integer}}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              matrix:
                type: array
                maxItems: 2
                items: {type: array, items: {type: object, properties: {x: {type: integer}}}}
`), &crd.Object); err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, crd, "v1")
	for path, want := range map[string]bool{
		"spec.free.deep.er": true, "spec.anyMap.k": true, "spec.byName.web.port": true, "spec.byName.web.other": false,
		"spec.template.kind": true, "spec.template.metadata.name": true, "spec.template.status": false,
		"spec.matrix.x": true, "spec.matrix.y": false, "spec.other": false,
	} {
		if got := s.Has(strings.Split(path, ".")...); got != want {
			t.Errorf("Has(%s) = %v, want %v", path, got, want)
		}
	}
	obj := map[string]any{"spec": map[string]any{
		"free":     map[string]any{"deep": map[string]any{"er": "x"}},
		"anyMap":   map[string]any{"k": "v"},
		"byName":   map[string]any{"web": map[string]any{"port": int64(80), "other": true}},
		"template": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"a": 1.0}, "status": map[string]any{}},
		"matrix":   []any{[]any{map[string]any{"x": 1.0, "y": 2.0}}, []any{}, []any{}},
		"other":    "gone",
	}}
	want := []string{"spec.byName.web.other", "spec.matrix", "spec.matrix.y", "spec.other", "spec.template.status"}
	if removed := s.Prune(obj); !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	spec := obj["spec"].(map[string]any)
	if spec["free"].(map[string]any)["deep"] == nil || spec["anyMap"].(map[string]any)["k"] != "v" ||
		spec["template"].(map[string]any)["kind"] != "Pod" || len(spec["matrix"].([]any)) != 2 {
		t.Errorf("kept parts changed: %v", spec)
	}
}

func TestLoad(t *testing.T) {
	crd := v010(t, "serviceimports")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdschema.CRDs: "CustomResourceDefinitionList"}, crd)
	s, err := crdschema.Load(context.Background(), dyn, mcsapi.Group, mcsapi.ServiceImports, "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxItems("spec", "ips") != 1 || s.Has("spec", "ipFamilies") {
		t.Error("Load did not return the served v0.1.0 schema")
	}
	if _, err := crdschema.Load(context.Background(), dyn, mcsapi.Group, mcsapi.ServiceExports, "v1alpha1"); !apierrors.IsNotFound(err) {
		t.Errorf("missing CRD: want NotFound, got %v", err)
	}
	if _, err := crdschema.Load(context.Background(), dyn, mcsapi.Group, mcsapi.ServiceImports, "v1beta1"); err == nil {
		t.Error("a version the CRD does not serve loaded")
	}
}
