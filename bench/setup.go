package main

// Setting the bench up: a fast and a sync-like client per member, fresh namespaces, and the
// exported services whose EndpointSlices the bench writes itself.

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

func (b *bench) connect() error {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &b.kubeconfig
	// The floors' client is built as sync builds its own, with the same rate limit.
	loader := &clusterset.Loader{ConfigFlags: flags, QPS: float32(b.qps), Burst: b.burst}
	for _, ctx := range b.contexts {
		same, err := loader.RESTConfig(ctx)
		if err != nil {
			return fmt.Errorf("context %s: %w", ctx, err)
		}
		fast := rest.CopyConfig(same)
		fast.Timeout = 5 * time.Minute // lists of tens of thousands of objects
		fast.QPS, fast.Burst = 1000, 2000
		// Deprecation warnings of the kinds purgeNamespace empties (Endpoints, ...) are no figure.
		fast.WarningHandler = rest.NoWarnings{}
		m := &member{name: ctx, light: b.light}
		if m.fast, err = kubernetes.NewForConfig(fast); err != nil {
			return err
		}
		if m.same, err = kubernetes.NewForConfig(same); err != nil {
			return err
		}
		if m.dyn, err = dynamic.NewForConfig(fast); err != nil {
			return err
		}
		if m.sameDyn, err = dynamic.NewForConfig(same); err != nil {
			return err
		}
		pb := rest.CopyConfig(fast)
		pb.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		pc, err := kubernetes.NewForConfig(pb)
		if err != nil {
			return err
		}
		m.raw = pc.CoreV1().RESTClient()
		b.members = append(b.members, m)
	}
	return nil
}

func (b *bench) namespaces(ctx context.Context) error {
	for _, m := range b.members {
		for _, n := range []string{ns, floorNS} {
			if err := freshNamespace(ctx, m, n, 3*time.Minute); err != nil {
				return err
			}
			if n == floorNS {
				hop := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hop"}, Data: map[string]string{"token": "-"}}
				if _, err := m.fast.CoreV1().ConfigMaps(n).Create(ctx, hop, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
				for _, name := range []string{"hop", "hop-copy"} { // sliceHop's
					sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelManagedBy: "kubectl-mcs"}},
						AddressType: discoveryv1.AddressTypeIPv4}
					if _, err := m.fast.DiscoveryV1().EndpointSlices(n).Create(ctx, sl, metav1.CreateOptions{FieldManager: "kubectl-mcs-bench"}); err != nil {
						return fmt.Errorf("%s: %w", m.name, err)
					}
				}
			}
		}
	}
	return nil
}

// freshNamespace deletes namespace n in m, waits (up to timeout) until it is gone, and creates
// it again.
func freshNamespace(ctx context.Context, m *member, n string, timeout time.Duration) error {
	if err := deleteNamespace(ctx, m, n, timeout); err != nil {
		return err
	}
	if _, err := m.fast.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	return nil
}

// deleteNamespace deletes namespace n in m and waits until it is gone.
func deleteNamespace(ctx context.Context, m *member, n string, timeout time.Duration) error {
	err := m.fast.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{})
	if m.light && err == nil {
		if err := purgeNamespace(ctx, m, n); err != nil {
			return err
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := m.fast.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		return fmt.Errorf("%s: namespace %s not deleted within %v", m.name, n, timeout)
	}
	return nil
}

func svcName(i int) string { return fmt.Sprintf("svc-%04d", i) }

// endpointsPerSlice is how many endpoints each source slice holds (-endpoints).
var endpointsPerSlice = 2

// address k of service i of exporter e: unique across the bench (up to 64,000 per exporter).
func address(e, i, k int) string {
	n := i*endpointsPerSlice + k
	return fmt.Sprintf("10.%d.%d.%d", 100+e, n/250, n%250+1)
}

// populate creates, in both exporters, N selectorless Services whose EndpointSlices the bench
// writes itself (so a source change is one precise write), and their ServiceExports.
func (b *bench) populate(ctx context.Context, from, to int) error {
	var mu sync.Mutex
	return parallel(16, (to-from)*len(b.exporters), func(n int) error {
		e, i := n%len(b.exporters), from+n/len(b.exporters)
		m, name := b.exporters[e], svcName(i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
		if _, err := m.fast.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: service %s: %w", m.name, name, err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-src", Labels: map[string]string{
				discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "bench.kubectl-mcs.io"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for k := 0; k < endpointsPerSlice; k++ {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(e, i, k)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		created, err := m.fast.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("%s: slice %s: %w", m.name, name, err)
		}
		if e == 0 {
			mu.Lock()
			b.sources[name] = created
			mu.Unlock()
		}
		v := b.exportVersion
		if v == "" {
			v = mcsapi.V1beta1
		}
		se := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": mcsapi.Group + "/" + v, "kind": "ServiceExport",
			"metadata": map[string]any{"name": name, "namespace": ns}}}
		if _, err := m.dyn.Resource(mcsapi.GVR(v, mcsapi.ServiceExports)).Namespace(ns).Create(ctx, se, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: export %s: %w", m.name, name, err)
		}
		return nil
	})
}
