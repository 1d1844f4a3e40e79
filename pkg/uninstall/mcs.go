package uninstall

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

var (
	servicesResource       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlicesResource = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	podsResource           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// served is the mcs-api version the member serves; "" when it serves none (no CRDs: nothing
// of theirs to delete).
func served(m *clusterset.Connection) (string, error) {
	v, err := mcsapi.ServedVersion(m.Discovery)
	if errors.As(err, &mcsapi.ErrNotInstalled{}) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cluster %q: discovery of %s: %w", m.ID, mcsapi.Group, err)
	}
	return v, nil
}

// list is every object of gvr in every namespace matching selector.
func list(ctx context.Context, m *clusterset.Connection, gvr schema.GroupVersionResource, selector string) ([]unstructured.Unstructured, error) {
	l, err := m.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("cluster %q: listing %s: %w", m.ID, gvr.Resource, err)
	}
	return l.Items, nil
}

// ExportsOf are the ServiceExports of one member, whoever wrote them: each one a user's wish.
func ExportsOf(ctx context.Context, m *clusterset.Connection) (Exports, error) {
	out := Exports{Cluster: m.ID}
	v, err := served(m)
	if err != nil || v == "" {
		return out, err
	}
	items, err := list(ctx, m, mcsapi.GVR(v, mcsapi.ServiceExports), "")
	for _, it := range items {
		out.Names = append(out.Names, it.GetNamespace()+"/"+it.GetName())
	}
	return out, err
}

// syncKind is a kind sync writes: the selector of its objects, and which of those it made.
type syncKind struct {
	gvr      schema.GroupVersionResource
	selector string
	keep     func(*unstructured.Unstructured) bool
}

// deleteSyncObjects deletes what sync wrote in a member, as sync tells its own: the
// ServiceImports and derived-NAME Services labelled ours, and the EndpointSlices labelled with
// our EndpointSlice manager. The ServiceExports (expose's, or the user's own) stay.
func (o *Options) deleteSyncObjects(ctx context.Context, s *site) error {
	ours := names.ManagedByLabel + "=" + names.ManagedByValue
	v, err := served(s.conn)
	if err != nil {
		return err
	}
	var kinds []syncKind
	if v != "" {
		// Imports first: the DNS server is gone, and nothing else answers from them.
		kinds = append(kinds, syncKind{mcsapi.GVR(v, mcsapi.ServiceImports), ours, nil})
	}
	kinds = append(kinds,
		syncKind{endpointSlicesResource, names.EndpointSliceManagedByLabel + "=" + names.EndpointSliceManagedByValue, nil},
		syncKind{servicesResource, ours, isDerivedService})
	for _, k := range kinds {
		items, err := list(ctx, s.conn, k.gvr, k.selector)
		if err != nil {
			return err
		}
		for i := range items {
			if k.keep != nil && !k.keep(&items[i]) {
				continue
			}
			if err := o.deleteObject(ctx, s, k.gvr, &items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteCRDs deletes the mcs-api CRDs that init installed (our label); CRDs another controller
// installed (Karmada's) are left alone, saying so.
func (o *Options) deleteCRDs(ctx context.Context, s *site) error {
	crds, err := mcsapi.CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := o.deleteNamed(ctx, s, mcsapi.CRDResource, "", crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// gone waits until get says NotFound, for at most o.Timeout.
func (o *Options) gone(ctx context.Context, what string, absent func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(o.Timeout)
	for {
		ok, err := absent(ctx)
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still there after %s (--timeout)", what, o.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// notFound is gone's check of one object.
func notFound(m *clusterset.Connection, gvr schema.GroupVersionResource, namespace, name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := resourceOf(m.Dynamic, gvr, namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
}
