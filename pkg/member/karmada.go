package member

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

var (
	clusterPropagationPolicies = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusterpropagationpolicies"}
	resourceBindings           = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
)

// ControlPlane is a Karmada control plane's clients and what it serves, for status.
type ControlPlane struct {
	name string
	kube kubernetes.Interface
	dyn  dynamic.Interface
	// gvrs are the served resources to read, besides Services.
	mcs, exports, imports, pps, cpps, rbs *schema.GroupVersionResource
}

// ConnectControlPlane builds the clients of the control plane that output names name, and finds
// what it serves.
func ConnectControlPlane(name string, cfg *rest.Config, cfgErr error) (*ControlPlane, error) {
	cp := &ControlPlane{name: name}
	if cfgErr != nil {
		return nil, fmt.Errorf("cluster %q: %w", cp.name, cfgErr)
	}
	var err error
	if cp.kube, err = protobufClient(cfg); err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cp.name, err)
	}
	if cp.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cp.name, err)
	}
	d := cp.kube.Discovery()
	if err := clusterset.Probe(context.Background(), d, 10*time.Second); err != nil {
		return nil, fmt.Errorf("cluster %q: unreachable: %w", cp.name, err)
	}
	served := func(gvr schema.GroupVersionResource) (*schema.GroupVersionResource, error) {
		rl, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %q: discovering %s: %w", cp.name, gvr.GroupVersion(), err)
		}
		for _, r := range rl.APIResources {
			if r.Name == gvr.Resource {
				return &gvr, nil
			}
		}
		return nil, nil
	}
	for _, x := range []struct {
		into **schema.GroupVersionResource
		gvr  schema.GroupVersionResource
	}{{&cp.mcs, karmada.MultiClusterServices}, {&cp.pps, karmada.PropagationPolicies}, {&cp.cpps, clusterPropagationPolicies}, {&cp.rbs, resourceBindings}} {
		if *x.into, err = served(x.gvr); err != nil {
			return nil, err
		}
	}
	// Karmada's webhook, controllers and policies speak v1alpha1: read in it where served.
	v := mcsapi.V1alpha1
	se, err := served(mcsapi.GVR(v, mcsapi.ServiceExports))
	if err == nil && se == nil {
		v, err = mcsapi.ServedVersion(d)
	}
	switch {
	case err == nil:
		se, si := mcsapi.GVR(v, mcsapi.ServiceExports), mcsapi.GVR(v, mcsapi.ServiceImports)
		cp.exports, cp.imports = &se, &si
	case !errors.As(err, &mcsapi.ErrNotInstalled{}):
		return nil, fmt.Errorf("cluster %q: %w", cp.name, err)
	}
	if cp.mcs == nil && cp.exports == nil {
		return nil, fmt.Errorf("cluster %q: not a Karmada control plane: it serves neither %s nor %s ServiceExports", cp.name, karmada.MultiClusterServices.GroupVersion(), mcsapi.Group)
	}
	return cp, nil
}

// Read lists every resource once, concurrently.
func (cp *ControlPlane) Read(ctx context.Context, ns string, chunk int64) (snapshot.Karmada, error) {
	in := snapshot.Karmada{ControlPlane: cp.name}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	list := func(gvr *schema.GroupVersionResource, namespaced bool, into *[]*unstructured.Unstructured) {
		if gvr == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			items, err := listAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]unstructured.Unstructured, string, error) {
				var l *unstructured.UnstructuredList
				var err error
				if namespaced {
					l, err = cp.dyn.Resource(*gvr).Namespace(ns).List(ctx, o)
				} else {
					l, err = cp.dyn.Resource(*gvr).List(ctx, o)
				}
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.GetContinue(), nil
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("cluster %q: listing %s: %v", cp.name, gvr.GroupResource(), err))
				return
			}
			*into = pointers(items)
		}()
	}
	var pps, cpps []*unstructured.Unstructured
	list(cp.mcs, true, &in.MultiClusterServices)
	list(cp.exports, true, &in.ServiceExports)
	list(cp.imports, true, &in.ServiceImports)
	list(cp.pps, true, &pps)
	list(cp.cpps, false, &cpps)
	list(cp.rbs, true, &in.ResourceBindings)
	wg.Add(1)
	go func() {
		defer wg.Done()
		svcs, err := listAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Service, string, error) {
			l, err := cp.kube.CoreV1().Services(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %q: listing services: %v", cp.name, err))
			return
		}
		for _, s := range svcs {
			in.Services = append(in.Services, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
	}()
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		return in, errors.New(strings.Join(errs, "; "))
	}
	in.Policies = append(pps, cpps...)
	return in, nil
}

// Watch keeps informers on the control plane until ctx ends, calling notify on every change;
// the function it returns reads them.
func (cp *ControlPlane) Watch(ctx context.Context, ns string, notify func()) (func() snapshot.Karmada, error) {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	kf := informers.NewSharedInformerFactoryWithOptions(cp.kube, 0, informers.WithNamespace(ns))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(cp.dyn, 0, ns, nil)
	cdf := dynamicinformer.NewDynamicSharedInformerFactory(cp.dyn, 0)
	svcInf := kf.Core().V1().Services()
	listers := map[*schema.GroupVersionResource]cache.GenericLister{}
	infs := []cache.SharedIndexInformer{svcInf.Informer()}
	for _, gvr := range []*schema.GroupVersionResource{cp.mcs, cp.exports, cp.imports, cp.pps, cp.rbs} {
		if gvr != nil {
			gi := df.ForResource(*gvr)
			listers[gvr], infs = gi.Lister(), append(infs, gi.Informer())
		}
	}
	if cp.cpps != nil {
		gi := cdf.ForResource(*cp.cpps)
		listers[cp.cpps], infs = gi.Lister(), append(infs, gi.Informer())
	}
	var synced []cache.InformerSynced
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, err
		}
		synced = append(synced, inf.HasSynced)
	}
	kf.Start(ctx.Done())
	df.Start(ctx.Done())
	cdf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil, fmt.Errorf("cluster %q: caches not synced", cp.name)
	}
	objs := func(gvr *schema.GroupVersionResource) []*unstructured.Unstructured {
		if gvr == nil {
			return nil
		}
		l, _ := listers[gvr].List(labels.Everything())
		out := make([]*unstructured.Unstructured, 0, len(l))
		for _, x := range l {
			if u, ok := x.(*unstructured.Unstructured); ok {
				out = append(out, u)
			}
		}
		return out
	}
	return func() snapshot.Karmada {
		in := snapshot.Karmada{ControlPlane: cp.name, MultiClusterServices: objs(cp.mcs),
			ServiceExports: objs(cp.exports), ServiceImports: objs(cp.imports),
			Policies: append(objs(cp.pps), objs(cp.cpps)...), ResourceBindings: objs(cp.rbs)}
		svcs, _ := svcInf.Lister().List(labels.Everything())
		for _, s := range svcs {
			in.Services = append(in.Services, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
		return in
	}, nil
}
