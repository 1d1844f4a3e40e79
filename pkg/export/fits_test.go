package expose

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
	raw, err := os.ReadFile("../../crdschema/testdata/v0.1.0-serviceexports.yaml")
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
	se := mcsapi.ServiceExport(mcsapi.V1alpha1, "demo", "serve", labels, nil)
	if err := exportFits("karmada", se, v010, nil, nil); err != nil {
		t.Errorf("no exported fields asked for: %v", err)
	}
	err = exportFits("karmada", se, v010, labels, nil)
	if err == nil || !strings.HasPrefix(err.Error(), `cluster "karmada": serviceexport.multicluster.x-k8s.io demo/serve: --exported-labels:`) ||
		!strings.Contains(err.Error(), "spec.exportedLabels") {
		t.Errorf("labels on v0.1.0: %v", err)
	}
	if err := exportFits("member2", se, v010, nil, annotations); err == nil || !strings.Contains(err.Error(), "--exported-annotations") {
		t.Errorf("annotations on v0.1.0: %v", err)
	}
	if err := exportFits("member1", se, nil, labels, annotations); err != nil {
		t.Errorf("nil schema (CRD not readable): %v", err)
	}
}
