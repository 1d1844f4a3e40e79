package main

// Setting bench -karmada up: the Karmada path's namespace, Services, MultiClusterServices and
// source slices; the consumer's watches; growing both paths to a size and waiting until each
// carries every service.

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
)

// karmadaNamespace creates karmadaNS on the control plane, after removing what an earlier run
// left, and waits for Karmada to create it in both members (it propagates every namespace).
func (k *karmadaBench) karmadaNamespace(ctx context.Context) error {
	for _, m := range []*member{k.cp, k.provider, k.consumer} {
		if err := deleteNamespace(ctx, m, karmadaNS, 5*time.Minute); err != nil {
			return err
		}
	}
	if _, err := k.cp.fast.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: karmadaNS}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: %w", k.cp.name, err)
	}
	for _, m := range []*member{k.provider, k.consumer} {
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := m.fast.CoreV1().Namespaces().Get(ctx, karmadaNS, metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			return fmt.Errorf("%s: Karmada did not create namespace %s within 2m", m.name, karmadaNS)
		}
	}
	return nil
}

// watch starts the consumer's watches of both paths' slices and both members' floor ConfigMaps.
func (k *karmadaBench) watch(ctx context.Context) error {
	var err error
	if k.syncSeen, err = watchSlices(ctx, k.consumer.fast, ns); err != nil {
		return fmt.Errorf("%s: %w", k.consumer.name, err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(k.consumer.fast, 0, informers.WithNamespace(karmadaNS),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = discoveryv1.LabelManagedBy + "=" + karmadaDispatchManager
		}))
	if k.karmadaSeen, err = start(ctx, f, f.Discovery().V1().EndpointSlices().Informer(), sliceAddresses); err != nil {
		return fmt.Errorf("%s: %w", k.consumer.name, err)
	}
	k.floor = map[string]*seer{}
	for _, m := range k.members {
		if k.floor[m.name+"/floor"], err = watchConfigMaps(ctx, m.same, floorNS); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	return nil
}

// grow adds services from..to-1 to both paths at once and waits until the consumer holds a copy
// of every one through each.
func (k *karmadaBench) grow(ctx context.Context, from, to int) error {
	errs := make(chan error, 2)
	go func() {
		if err := k.populate(ctx, from, to); err != nil {
			errs <- fmt.Errorf("sync path: %w", err)
			return
		}
		errs <- k.carried(ctx, "sync", k.syncSeen, to)
	}()
	go func() {
		if err := k.populateKarmada(ctx, from, to); err != nil {
			errs <- fmt.Errorf("Karmada path: %w", err)
			return
		}
		errs <- k.carried(ctx, "Karmada", k.karmadaSeen, to)
	}()
	err1, err2 := <-errs, <-errs
	if err1 != nil {
		return err1
	}
	if err2 != nil {
		return err2
	}
	_, err := k.quiet(ctx)
	return err
}

// carried waits until the consumer's watch holds n slices of the path.
func (k *karmadaBench) carried(ctx context.Context, path string, s *seer, n int) error {
	limit := 5*time.Minute + time.Duration(n)*time.Second
	t0, last := time.Now(), time.Now()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, limit, true, func(context.Context) (bool, error) {
		got := len(s.store.List())
		if time.Since(last) > 30*time.Second {
			logf("%s: %s holds %d of %d slices", path, k.consumer.name, got, n)
			last = time.Now()
		}
		return got >= n, nil
	})
	if err != nil {
		return fmt.Errorf("%s holds %d of %d slices after %.0f s: %w", k.consumer.name, len(s.store.List()), n, time.Since(t0).Seconds(), err)
	}
	return nil
}

// populateKarmada writes, for services from..to-1, a selectorless Service and a
// MultiClusterService (CrossCluster, provider member1, consumer member2) on the control plane,
// and the service's two-endpoint source slice in the provider, which the bench writes itself as
// on the sync path. The MultiClusterService places the Service in both members itself: no
// PropagationPolicy is needed, nor could one claim the Service.
func (k *karmadaBench) populateKarmada(ctx context.Context, from, to int) error {
	var mu sync.Mutex
	return parallel(16, to-from, func(n int) error {
		i := from + n
		name := svcName(i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
		if _, err := k.cp.fast.CoreV1().Services(karmadaNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: service %s: %w", k.cp.name, name, err)
		}
		mcs := karmada.MCSSpec{Namespace: karmadaNS, Name: name, Types: []string{karmada.TypeCrossCluster},
			Providers: []string{k.provider.name}, Consumers: []string{k.consumer.name}}.MultiClusterService()
		if _, err := k.cp.dyn.Resource(karmada.MultiClusterServices).Namespace(karmadaNS).Create(ctx, mcs, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: multiclusterservice %s: %w", k.cp.name, name, err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-src", Labels: map[string]string{
				discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "bench.kubectl-mcs.io"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for e := 0; e < 2; e++ {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(2, i, e)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		created, err := k.provider.fast.DiscoveryV1().EndpointSlices(karmadaNS).Create(ctx, slice, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = k.provider.fast.DiscoveryV1().EndpointSlices(karmadaNS).Get(ctx, slice.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("%s: slice %s: %w", k.provider.name, slice.Name, err)
		}
		mu.Lock()
		k.karmadaSources[name] = created
		mu.Unlock()
		return nil
	})
}
