package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// ReadClusterset reads every member concurrently: each resource is listed once per member (in
// chunks), and the join happens in memory, so the number of API calls does not grow with the
// number of services.
func ReadClusterset(ctx context.Context, members []*clusterset.Member, ns, service string, chunk int64) []Cluster {
	out := make([]Cluster, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = readMember(ctx, m, ns, service, chunk)
		}()
	}
	wg.Wait()
	return out
}

// ProtobufClient is a clientset for the built-in types speaking protobuf, several times cheaper
// to decode than JSON for long lists of Services and EndpointSlices.
func ProtobufClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return kubernetes.NewForConfig(c)
}

// readMember lists what status needs from one member, all lists at once.
func readMember(ctx context.Context, m *clusterset.Member, ns, service string, chunk int64) Cluster {
	c := Cluster{ID: m.ID, Context: m.Context}
	if m.Err != nil {
		c.State, c.Message = ClusterUnreachable, m.Err.Error()
		return c
	}
	kc, err := ProtobufClient(m.Config)
	if err != nil {
		c.State, c.Message = ClusterError, err.Error()
		return c
	}
	rc := m.Client.CoreV1().RESTClient()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []string
		noCRDs bool
	)
	fail := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf("listing %s: %v", what, err))
	}
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	byName := metav1.ListOptions{}
	if service != "" {
		byName.FieldSelector = fields.OneTermEqualSelector("metadata.name", service).String()
	}

	run(func() {
		v, err := mcsapi.ServedVersion(m.Discovery)
		if errors.As(err, &mcsapi.ErrNotInstalled{}) {
			noCRDs = true
			return
		}
		if err != nil {
			fail("API groups", err)
			return
		}
		c.MCSAPIVersion = v
		var inner sync.WaitGroup
		inner.Add(2)
		go func() {
			defer inner.Done()
			l, err := listMCS[mcsv1beta1.ServiceExport](ctx, rc, mcsapi.GVR(v, mcsapi.ServiceExports), ns, byName, chunk)
			if err != nil {
				fail(mcsapi.ServiceExports, err)
			}
			c.ServiceExports = l
		}()
		go func() {
			defer inner.Done()
			l, err := listMCS[mcsv1beta1.ServiceImport](ctx, rc, mcsapi.GVR(v, mcsapi.ServiceImports), ns, byName, chunk)
			if err != nil {
				fail(mcsapi.ServiceImports, err)
			}
			c.ServiceImports = l
		}()
		inner.Wait()
	})
	run(func() {
		l, err := ListAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Namespace, string, error) {
			l, err := kc.CoreV1().Namespaces().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			// Not fatal: without the namespaces, a missing import cannot be told from a
			// namespace that does not exist, and both are shown as missing.
			c.NamespacesUnknown = true
			return
		}
		for i := range l {
			c.Namespaces = append(c.Namespaces, l[i].Name)
		}
	})
	run(func() {
		l, err := ListAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Service, string, error) {
			l, err := kc.CoreV1().Services(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			fail("services", err)
			return
		}
		c.Services = Pointers(l)
	})
	run(func() {
		sels := []string{""}
		if service != "" {
			// The Service's own slices, sync's copies (labelled for the derived Service) and any
			// controller's copies labelled with the service name.
			sels = []string{
				fmt.Sprintf("%s in (%s,%s)", discoveryv1.LabelServiceName, service, names.DerivedServiceName(service)),
				mcsv1beta1.LabelServiceName + "=" + service,
			}
		}
		seen := map[string]bool{}
		for _, sel := range sels {
			l, err := ListAll(ctx, chunk, metav1.ListOptions{LabelSelector: sel}, func(ctx context.Context, o metav1.ListOptions) ([]discoveryv1.EndpointSlice, string, error) {
				l, err := kc.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.Continue, nil
			})
			if err != nil {
				fail("endpointslices", err)
				return
			}
			for _, s := range Pointers(l) {
				if k := s.Namespace + "/" + s.Name; !seen[k] {
					seen[k] = true
					c.EndpointSlices = append(c.EndpointSlices, s)
				}
			}
		}
	})
	wg.Wait()

	switch {
	case len(errs) > 0:
		sort.Strings(errs)
		c = Cluster{ID: c.ID, Context: c.Context, State: ClusterError, Message: strings.Join(errs, "; ")}
		if allUnreachable(errs) {
			c.State = ClusterUnreachable
		}
	case noCRDs:
		c = Cluster{ID: c.ID, Context: c.Context, State: ClusterNoCRDs, Message: mcsapi.ErrNotInstalled{}.Error()}
	default:
		c.State = ClusterReachable
	}
	return c
}

// allUnreachable tells a member that went away after the probe from one that refuses a list.
func allUnreachable(errs []string) bool {
	for _, e := range errs {
		if !strings.Contains(e, "connection refused") && !strings.Contains(e, "i/o timeout") && !strings.Contains(e, "no such host") {
			return false
		}
	}
	return true
}

// ListAll lists in chunks of chunk objects (0: one request), starting over without chunks when
// the continue token expires, as kubectl does.
func ListAll[T any](ctx context.Context, chunk int64, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) ([]T, string, error)) ([]T, error) {
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

// Pointers returns a pointer to each item, for lists read by value.
func Pointers[T any](items []T) []*T {
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
	items, err := ListAll(ctx, chunk, base, func(ctx context.Context, o metav1.ListOptions) ([]T, string, error) {
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
	return Pointers(items), nil
}
