package main

// Light members (make bench-clusters, TESTBED_LIGHT=1) run an apiserver and etcd only: no
// namespace controller empties a deleted namespace and takes its finalizer off. The bench does
// it itself: every namespaced kind the member serves is emptied, then the namespace finalized.

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// purgeNamespace does the namespace controller's work for namespace n, being deleted in m.
func purgeNamespace(ctx context.Context, m *member, n string) error {
	lists, err := m.fast.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("%s: discovery: %w", m.name, err)
	}
	var errs []error
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return err
		}
		for _, r := range l.APIResources {
			if !sets.New(r.Verbs...).Has("deletecollection") {
				continue
			}
			err := m.dyn.Resource(gv.WithResource(r.Name)).Namespace(n).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("%s: emptying namespace %s of %s: %w", m.name, n, r.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	ns, err := m.fast.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: namespace %s: %w", m.name, n, err)
	}
	ns.Spec.Finalizers = nil // the namespace controller's "kubernetes"
	if _, err := m.fast.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: finalizing namespace %s: %w", m.name, n, err)
	}
	return nil
}
