// Package crdschema decides which fields a served CustomResourceDefinition version declares, so
// that objects are shaped for the schema a cluster really serves. Clusters (and Karmada) that run
// the mcs-api v0.1.0-era CRDs reject, under server-side apply, every field their structural schema
// does not declare ("field not declared in schema").
//
// It walks the unstructured openAPIV3Schema of the CRD rather than the typed apiextensions API,
// which would pull k8s.io/apiextensions-apiserver into the binary for a handful of keys.
package crdschema

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// CRDs is where CustomResourceDefinitions live.
var CRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Schema is the structural OpenAPI v3 schema of one served CRD version. A nil *Schema declares everything.
type Schema struct {
	root map[string]any
}

// FromCRD reads the schema of a served version out of an apiextensions.k8s.io/v1 CRD.
func FromCRD(crd *unstructured.Unstructured, version string) (*Schema, error) {
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return nil, fmt.Errorf("customresourcedefinition %s: spec.versions: %w", crd.GetName(), err)
	}
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok || m["name"] != version {
			continue
		}
		if served, _ := m["served"].(bool); !served {
			return nil, fmt.Errorf("customresourcedefinition %s: version %s is not served", crd.GetName(), version)
		}
		// Shared with the CRD, not copied: a Schema only ever reads it.
		root, ok, _ := unstructured.NestedFieldNoCopy(m, "schema", "openAPIV3Schema")
		if r, isMap := root.(map[string]any); ok && isMap {
			return &Schema{root: r}, nil
		}
		return nil, fmt.Errorf("customresourcedefinition %s: version %s has no schema", crd.GetName(), version)
	}
	return nil, fmt.Errorf("customresourcedefinition %s: version %s is not served", crd.GetName(), version)
}

// Load reads the CRD <resource>.<group> from a cluster and returns the schema of version. The
// error of the GET is returned as it is, so that callers can tell NotFound and Forbidden apart.
func Load(ctx context.Context, dyn dynamic.Interface, group, resource, version string) (*Schema, error) {
	crd, err := dyn.Resource(CRDs).Get(ctx, resource+"."+group, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return FromCRD(crd, version)
}

// Has reports whether the schema declares the field at path (property names; array items are
// walked transparently, so Has("spec", "ports", "appProtocol") asks about every port).
func (s *Schema) Has(path ...string) bool {
	if s == nil {
		return true
	}
	_, ok := s.lookup(path)
	return ok
}

// MaxItems is the maxItems of the array at path, 0 when unbounded or unknown.
func (s *Schema) MaxItems(path ...string) int {
	if s == nil {
		return 0
	}
	n, ok := s.lookup(path)
	if !ok || n == nil {
		return 0
	}
	return maxItems(n)
}

// Prune deletes from obj every field the schema does not declare and cuts arrays to their
// maxItems, as the apiserver's structural pruning would, but before the write instead of a
// rejection. apiVersion, kind and metadata are left alone. It returns the dotted paths removed
// or cut, sorted and without duplicates (array items add no index: "spec.ports.foo").
func (s *Schema) Prune(obj map[string]any) []string {
	if s == nil || obj == nil {
		return nil
	}
	seen := map[string]bool{}
	pruneObject(obj, s.root, "", true, seen)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// lookup walks path from the root. A nil node with ok means the field is declared but its
// contents are free (x-kubernetes-preserve-unknown-fields, additionalProperties: true).
func (s *Schema) lookup(path []string) (map[string]any, bool) {
	n := s.root
	for i, name := range path {
		child, ok := field(n, name, i == 0)
		if !ok {
			return nil, false
		}
		if child == nil {
			return nil, true
		}
		n = child
	}
	return n, true
}

// field is the schema of property name of the object node n (through array items), nil with ok
// when the node declares it without a schema of its own.
func field(n map[string]any, name string, root bool) (map[string]any, bool) {
	n = elements(n)
	// The apiserver checks an object's apiVersion, kind and metadata itself, whatever the schema
	// says of them (most say only "metadata: {type: object}").
	if (root || isTrue(n, "x-kubernetes-embedded-resource")) && (name == "apiVersion" || name == "kind" || name == "metadata") {
		return nil, true
	}
	if props, ok := n["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			return p, true
		}
	}
	switch ap := n["additionalProperties"].(type) {
	case map[string]any:
		return ap, true
	case bool:
		if ap {
			return nil, true
		}
	}
	if isTrue(n, "x-kubernetes-preserve-unknown-fields") {
		return nil, true
	}
	return nil, false
}

// elements is the item schema of an array node (of arrays of arrays too), else n itself.
func elements(n map[string]any) map[string]any {
	for n != nil {
		items, ok := n["items"].(map[string]any)
		if !ok {
			return n
		}
		n = items
	}
	return n
}

func pruneObject(obj map[string]any, n map[string]any, prefix string, root bool, removed map[string]bool) {
	for name, v := range obj {
		if root && (name == "apiVersion" || name == "kind" || name == "metadata") {
			continue
		}
		path := join(prefix, name)
		child, ok := field(n, name, false)
		if !ok {
			delete(obj, name)
			removed[path] = true
			continue
		}
		if child == nil {
			continue // free-form: the schema says nothing about what is inside
		}
		obj[name] = pruneValue(v, child, path, removed)
	}
}

func pruneValue(v any, n map[string]any, path string, removed map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		pruneObject(v, n, path, false, removed)
		return v
	case []any:
		if max := maxItems(n); max > 0 && len(v) > max {
			v = v[:max]
			removed[path] = true
		}
		if items, ok := n["items"].(map[string]any); ok {
			for i := range v {
				v[i] = pruneValue(v[i], items, path, removed)
			}
		}
		return v
	}
	return v
}

func maxItems(n map[string]any) int {
	switch m := n["maxItems"].(type) {
	case int64:
		return int(m)
	case int:
		return m
	case int32:
		return int(m)
	case float64:
		return int(m)
	}
	return 0
}

func isTrue(n map[string]any, key string) bool {
	b, _ := n[key].(bool)
	return b
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return strings.Join([]string{prefix, name}, ".")
}
