package member

// Lists as kubectl makes them: in chunks, protobuf where the apiserver speaks it.

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultChunkSize is --chunk-size of status and diagnose: one request per list. They show
// nothing before every list is in, so kubectl's chunks of 500 only add round trips: at 10,000
// services a member's EndpointSlices took 80 sequential requests, and each page cost its
// apiserver more CPU than the objects it held (2.2x the CPU of one list, Kubernetes 1.36).
// Apiservers since 1.33 stream a list from their cache rather than building it in memory;
// --chunk-size 500 suits older ones holding very large lists.
const DefaultChunkSize = 0

// protobufClient is a clientset for the built-in types speaking protobuf, several times cheaper
// to decode than JSON for long lists of Services and EndpointSlices.
func protobufClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return kubernetes.NewForConfig(c)
}

// listAll lists in chunks of chunk objects (0: one request), starting over without chunks when
// the continue token expires, as kubectl does.
func listAll[T any](ctx context.Context, chunk int64, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) ([]T, string, error)) ([]T, error) {
	opts.Limit = chunk
	var out []T
	for {
		items, cont, err := list(ctx, opts)
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			opts.Limit, opts.Continue, out = 0, "", nil
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if cont == "" {
			return out, nil
		}
		opts.Continue = cont
	}
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// listMCS lists ServiceExports or ServiceImports of any served version straight into v1beta1
// objects (the fields status reads are the same in v1alpha1). Custom resources only speak JSON;
// decoding it into the typed list directly, rather than through unstructured maps, is what keeps
// a thousand-service list fast.
func listMCS[T any](ctx context.Context, rc rest.Interface, gvr schema.GroupVersionResource, ns string, base metav1.ListOptions, chunk int64) ([]*T, error) {
	items, err := listAll(ctx, chunk, base, func(ctx context.Context, o metav1.ListOptions) ([]T, string, error) {
		req := rc.Get().AbsPath("/apis", gvr.Group, gvr.Version)
		if ns != "" {
			req = req.Namespace(ns)
		}
		req = req.Resource(gvr.Resource).SpecificallyVersionedParams(&o, metav1.ParameterCodec, metav1.SchemeGroupVersion)
		body, err := req.SetHeader("Accept", runtime.ContentTypeJSON).DoRaw(ctx)
		if err != nil {
			return nil, "", err
		}
		var l struct {
			metav1.ListMeta `json:"metadata"`
			Items           []T `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, "", fmt.Errorf("decoding %s: %w", gvr.Resource, err)
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, err
	}
	return pointers(items), nil
}
