// Package decode turns the unstructured objects of dynamic clients and informers into typed ones.
// ServiceExports and ServiceImports come that way because their served version (v1alpha1 or
// v1beta1) is only known at run time; both decode into the v1beta1 types.
package decode

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Unstructured decodes u into a new T; the error names the object.
func Unstructured[T any](u *unstructured.Unstructured) (*T, error) {
	t := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return t, nil
}

// Transform is a dynamic informer's transform into *T (SetTransform), so that an object is
// decoded once, when it arrives, rather than by every reader. An object that does not decode is
// kept unstructured, for its readers to report, instead of failing the whole informer.
func Transform[T any](obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // a tombstone, or already decoded
	}
	if t, err := Unstructured[T](u); err == nil {
		return t, nil
	}
	return obj, nil
}

// Cached is the object key ("ns/name") of an informer store that Transform[T] feeds: nil when
// absent, the error of decoding it when it did not decode. It is the store's own: read only.
func Cached[T any](store cache.Store, key string) (*T, error) {
	o, exists, err := store.GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	return Entry[T](key, o)
}

// Entry is o, the entry key of such a store, as *T.
func Entry[T any](key string, o any) (*T, error) {
	switch o := o.(type) {
	case *T:
		return o, nil
	case *unstructured.Unstructured:
		return Unstructured[T](o) // it did not decode when it arrived: say why
	}
	return nil, fmt.Errorf("%s: unexpected %T in the cache", key, o)
}

// List is every object of such a store that decoded.
func List[T any](store cache.Store) []*T {
	objs := store.List()
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}
