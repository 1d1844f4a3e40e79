package mcsapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
)

// CRDResource is where CustomResourceDefinitions live.
var CRDResource = crdschema.CRDs

// CRDs returns the ServiceExport and ServiceImport CRDs shipped in sigs.k8s.io/mcs-api.
func CRDs() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, raw := range [][]byte{mcscrd.ServiceExportCRD, mcscrd.ServiceImportCRD} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			return nil, fmt.Errorf("decoding embedded mcs-api CRD: %w", err)
		}
		out = append(out, u)
	}
	return out, nil
}
