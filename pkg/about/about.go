// Package about holds the SIG-Multicluster About API (KEP-2149): the ClusterProperty CRD written for
// kubectl-mcs, builders for the two properties a clusterset member carries, and reading a member's
// cluster ID from them.
package about

import (
	"context"
	_ "embed"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

const (
	// ClusterIDProperty names the member's cluster ID; ClustersetProperty the clusterset's name.
	ClusterIDProperty  = "cluster.clusterset.k8s.io"
	ClustersetProperty = "clusterset.k8s.io"
)

// Resource is where ClusterProperties live.
var Resource = schema.GroupVersionResource{Group: "about.k8s.io", Version: "v1alpha1", Resource: "clusterproperties"}

//go:embed clusterproperty-crd.yaml
var crdYAML []byte

// CRD returns the ClusterProperty CRD.
func CRD() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(crdYAML, &u.Object); err != nil {
		return nil, fmt.Errorf("decoding embedded ClusterProperty CRD: %w", err)
	}
	return u, nil
}

// Property builds the ClusterProperty name=value, labelled as ours.
func Property(name, value string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Resource.GroupVersion().String(),
		"kind":       "ClusterProperty",
		"metadata": map[string]any{
			"name":   name,
			"labels": map[string]any{names.ManagedByLabel: names.ManagedByValue},
		},
		"spec": map[string]any{"value": value},
	}}
	return u
}

// ClusterID reads a member's cluster.clusterset.k8s.io property: "" when the CRD or the object is
// absent (the caller falls back), an error for anything else.
func ClusterID(ctx context.Context, c dynamic.Interface) (string, error) {
	u, err := c.Resource(Resource).Get(ctx, ClusterIDProperty, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("clusterproperty/%s: %w", ClusterIDProperty, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "value")
	return v, nil
}
