package mcsapi

import (
	"context"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
)

func fakeCRDs(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdschema.CRDs: "CustomResourceDefinitionList"}, objs...)
}

func TestLoadSchemasEmbedded(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchemas(context.Background(), fakeCRDs(crds[0], crds[1]), V1beta1)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Export.Has("spec", "exportedLabels") || s.Import.MaxItems("spec", "ips") != 2 {
		t.Errorf("v1beta1 schemas of the embedded CRDs unexpected")
	}
}

// Karmada's bundled CRDs (mcs-api v0.1.0): no ServiceExport spec, one ServiceImport IP.
func TestLoadSchemasV010(t *testing.T) {
	var objs []runtime.Object
	for _, r := range []string{ServiceExports, ServiceImports} {
		raw, err := os.ReadFile("../crdschema/testdata/v0.1.0-" + r + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	dyn := fakeCRDs(objs...)
	s, err := LoadSchemas(context.Background(), dyn, V1alpha1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Export.Has("spec") || s.Import.MaxItems("spec", "ips") != 1 || s.Import.Has("spec", "ipFamilies") {
		t.Errorf("v0.1.0 schemas unexpected")
	}
	if _, err := LoadSchemas(context.Background(), dyn, V1beta1); err == nil || !strings.Contains(err.Error(), "ServiceExport schema") {
		t.Errorf("v1beta1 on v0.1.0 CRDs: %v", err)
	}
	if _, err := LoadSchemas(context.Background(), fakeCRDs(), V1alpha1); !apierrors.IsNotFound(err) {
		t.Errorf("no CRDs: want NotFound, got %v", err)
	}
}
