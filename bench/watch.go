package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
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

// watchAll watches managed slices, imports and exports everywhere; converged reports whether
// every cluster holds all want imports with their IP and a slice per exporter, and every export
// is Ready.
func (b *bench) watchAll(ctx context.Context) (map[string]*seer, func(want int) bool, error) {
	seers := map[string]*seer{}
	var imports, exports []cache.Store
	for _, m := range b.members {
		s, err := watchSlices(ctx, m.fast, ns)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name] = s
		if s, err = watchConfigMaps(ctx, m.same, floorNS); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name+"/floor"] = s
		if s, err = watchSlices(ctx, m.same, floorNS); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name+"/floor-slices"] = s
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m.dyn, 0, ns, nil)
		si := f.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports)).Informer()
		se := f.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).Informer()
		f.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), si.HasSynced, se.HasSynced) {
			return nil, nil, fmt.Errorf("%s: watch did not sync", m.name)
		}
		imports, exports = append(imports, si.GetStore()), append(exports, se.GetStore())
	}
	converged := func(want int) bool {
		for i := range b.members {
			if len(seers[b.members[i].name].store.List()) != want*len(b.exporters) {
				return false
			}
			n := 0
			for _, o := range imports[i].List() {
				if ips, _, _ := unstructured.NestedStringSlice(o.(*unstructured.Unstructured).Object, "spec", "ips"); len(ips) > 0 {
					n++
				}
			}
			if n != want {
				return false
			}
			if i < len(b.exporters) {
				n = 0
				for _, o := range exports[i].List() {
					if ready(o.(*unstructured.Unstructured)) {
						n++
					}
				}
				if n != want {
					return false
				}
			}
		}
		return true
	}
	return seers, converged, nil
}

func ready(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}
