package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Read reads every member concurrently: each resource is listed once per member (in
// chunks), and the join happens in memory, so the number of API calls does not grow with the
// number of services.
func Read(ctx context.Context, members []*clusterset.Connection, ns, service string, chunk int64) []snapshot.Cluster {
	out := make([]snapshot.Cluster, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = read(ctx, m, ns, service, chunk)
		}()
	}
	wg.Wait()
	return out
}

// read lists what status needs from one member, all lists at once.
func read(ctx context.Context, m *clusterset.Connection, ns, service string, chunk int64) snapshot.Cluster {
	c := snapshot.Cluster{ID: m.ID, Context: m.Context, IDSource: m.IDSource}
	if m.Err != nil {
		c.State, c.Message = snapshot.Unreachable, m.Err.Error()
		return c
	}
	kc, err := protobufClient(m.Config)
	if err != nil {
		c.State, c.Message = snapshot.Error, err.Error()
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
	run(func() { c.Syncs = readSyncs(ctx, m) })
	run(func() {
		l, err := listAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Namespace, string, error) {
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
		l, err := listAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Service, string, error) {
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
		c.Services = pointers(l)
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
			l, err := listAll(ctx, chunk, metav1.ListOptions{LabelSelector: sel}, func(ctx context.Context, o metav1.ListOptions) ([]discoveryv1.EndpointSlice, string, error) {
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
			for _, s := range pointers(l) {
				if k := s.Namespace + "/" + s.Name; !seen[k] {
					seen[k] = true
					c.EndpointSlices = append(c.EndpointSlices, s)
				}
			}
		}
	})
	run(func() {
		// Not fatal: without them, whether a choice of PreferSameCluster takes effect is unknown.
		l, err := listAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Node, string, error) {
			l, err := kc.CoreV1().Nodes().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err == nil {
			byNode := make(map[string]string, len(l))
			for i := range l {
				byNode[l[i].Name] = snapshot.ZoneOf(&l[i])
			}
			c.Topology = snapshot.NewTopology(byNode)
		}
	})
	wg.Wait()

	switch {
	case len(errs) > 0:
		slices.Sort(errs)
		c = snapshot.Cluster{ID: c.ID, Context: c.Context, IDSource: c.IDSource, State: snapshot.Error, Message: strings.Join(errs, "; ")}
		if allUnreachable(errs) {
			c.State = snapshot.Unreachable
		}
	case noCRDs:
		c = snapshot.Cluster{ID: c.ID, Context: c.Context, IDSource: c.IDSource, State: snapshot.NoCRDs, Message: mcsapi.ErrNotInstalled{}.Error(), Syncs: c.Syncs}
	default:
		c.State = snapshot.Reachable
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
