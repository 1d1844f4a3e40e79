package export

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

func TestExportFits(t *testing.T) {
	raw, err := os.ReadFile("../crdschema/testdata/v0.1.0-serviceexports.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		t.Fatal(err)
	}
	v010, err := crdschema.FromCRD(crd, mcsapi.V1alpha1)
	if err != nil {
		t.Fatal(err)
	}
	labels, annotations := map[string]string{"tier": "web"}, map[string]string{"team": "a"}
	spec := func(l, a map[string]string) *Spec {
		return &Spec{Target: Target{Namespace: "demo", Service: "serve"}, Labels: l, Annotations: a}
	}
	if err := spec(nil, nil).exportFits("karmada", mcsapi.V1alpha1, "serve", v010); err != nil {
		t.Errorf("no exported fields asked for: %v", err)
	}
	err = spec(labels, nil).exportFits("karmada", mcsapi.V1alpha1, "serve", v010)
	if err == nil || !strings.HasPrefix(err.Error(), `cluster "karmada": serviceexport.multicluster.x-k8s.io demo/serve: --exported-labels:`) ||
		!strings.Contains(err.Error(), "spec.exportedLabels") || !strings.Contains(err.Error(), "(multicluster.x-k8s.io/v1alpha1)") {
		t.Errorf("labels on v0.1.0: %v", err)
	}
	if err := spec(nil, annotations).exportFits("member2", mcsapi.V1alpha1, "serve", v010); err == nil || !strings.Contains(err.Error(), "--exported-annotations") {
		t.Errorf("annotations on v0.1.0: %v", err)
	}
	if err := spec(labels, annotations).exportFits("member1", mcsapi.V1beta1, "serve", nil); err != nil {
		t.Errorf("nil schema (CRD not readable): %v", err)
	}
}
