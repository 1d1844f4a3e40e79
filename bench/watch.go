package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// seer watches one cluster and wakes whoever awaits a token (an endpoint address, or a
// ConfigMap value) the moment the watch delivers an object carrying it.
type seer struct {
	mu      sync.Mutex
	waiting map[string]chan time.Time
	store   cache.Store
}

func (s *seer) await(token string) chan time.Time {
	ch := make(chan time.Time, 1)
	s.mu.Lock()
	s.waiting[token] = ch
	s.mu.Unlock()
	return ch
}

func (s *seer) saw(tokens ...string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tokens {
		if ch, ok := s.waiting[t]; ok {
			ch <- now
			delete(s.waiting, t)
		}
	}
}

func (s *seer) handler(tokens func(any) []string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.saw(tokens(o)...) },
		UpdateFunc: func(_, o any) { s.saw(tokens(o)...) },
	}
}

func sliceAddresses(o any) []string {
	sl, ok := o.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range sl.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

func configMapToken(o any) []string {
	if cm, ok := o.(*corev1.ConfigMap); ok {
		return []string{cm.Data["token"]}
	}
	return nil
}

// watchSlices watches the EndpointSlices kubectl-mcs writes in ns.
func watchSlices(ctx context.Context, kube kubernetes.Interface, ns string) (*seer, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = discoveryv1.LabelManagedBy + "=kubectl-mcs" }))
	inf := f.Discovery().V1().EndpointSlices().Informer()
	return start(ctx, f, inf, sliceAddresses)
}

// watchConfigMaps watches the floor's ConfigMaps in ns.
func watchConfigMaps(ctx context.Context, kube kubernetes.Interface, ns string) (*seer, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().ConfigMaps().Informer()
	return start(ctx, f, inf, configMapToken)
}

func start(ctx context.Context, f informers.SharedInformerFactory, inf cache.SharedIndexInformer, tokens func(any) []string) (*seer, error) {
	s := &seer{waiting: map[string]chan time.Time{}, store: inf.GetStore()}
	if _, err := inf.AddEventHandler(s.handler(tokens)); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watch did not sync")
	}
	return s, nil
}

// awaitTimeout bounds one propagation or floor sample; the busy phase raises it, since a change
// then waits behind everything queued before it.
var awaitTimeout = 30 * time.Second

// await returns when the token was seen, or fails after awaitTimeout.
func await(ch chan time.Time, what string) (time.Time, error) {
	select {
	case t := <-ch:
		return t, nil
	case <-time.After(awaitTimeout):
		return time.Time{}, fmt.Errorf("%s: not seen within %v", what, awaitTimeout)
	}
}
