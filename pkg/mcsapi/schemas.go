package mcsapi

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
)

// Schemas are the served schemas of ServiceExport and ServiceImport in one cluster.
type Schemas struct{ Export, Import *crdschema.Schema }

// LoadSchemas reads the ServiceExport and ServiceImport CRDs of a cluster and returns the schemas
// of version. Errors of the GETs keep their API status (apierrors.IsNotFound, IsForbidden work).
func LoadSchemas(ctx context.Context, dyn dynamic.Interface, version string) (Schemas, error) {
	var s Schemas
	var err error
	if s.Export, err = crdschema.Load(ctx, dyn, Group, ServiceExports, version); err != nil {
		return Schemas{}, fmt.Errorf("reading the ServiceExport schema: %w", err)
	}
	if s.Import, err = crdschema.Load(ctx, dyn, Group, ServiceImports, version); err != nil {
		return Schemas{}, fmt.Errorf("reading the ServiceImport schema: %w", err)
	}
	return s, nil
}
