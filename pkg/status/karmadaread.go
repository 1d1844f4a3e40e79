package status

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

var clusterPropagationPolicies = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusterpropagationpolicies"}

// KarmadaControlPlane is a Karmada control plane's clients and what it serves.
type KarmadaControlPlane struct {
	Name string
	Kube kubernetes.Interface
	Dyn  dynamic.Interface
	// The served resources to read, besides Services; nil when not served.
	MCS, Exports, Imports, PPs, CPPs *schema.GroupVersionResource
}

// ConnectKarmada builds the clients of a Karmada control plane (named name in errors) and finds
// what it serves.
func ConnectKarmada(name string, cfg *rest.Config) (*KarmadaControlPlane, error) {
	cp := &KarmadaControlPlane{Name: name}
	var err error
	if cp.Kube, err = ProtobufClient(cfg); err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cp.Name, err)
	}
	if cp.Dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cp.Name, err)
	}
	d := cp.Kube.Discovery()
	if err := clusterset.Probe(context.Background(), d, 10*time.Second); err != nil {
		return nil, fmt.Errorf("cluster %q: unreachable: %w", cp.Name, err)
	}
	served := func(gvr schema.GroupVersionResource) (*schema.GroupVersionResource, error) {
		rl, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %q: discovering %s: %w", cp.Name, gvr.GroupVersion(), err)
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
	}{{&cp.MCS, karmada.MultiClusterServices}, {&cp.PPs, karmada.PropagationPolicies}, {&cp.CPPs, clusterPropagationPolicies}} {
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
		cp.Exports, cp.Imports = &se, &si
	case !errors.As(err, &mcsapi.ErrNotInstalled{}):
		return nil, fmt.Errorf("cluster %q: %w", cp.Name, err)
	}
	if cp.MCS == nil && cp.Exports == nil {
		return nil, fmt.Errorf("cluster %q: not a Karmada control plane: it serves neither %s nor %s ServiceExports", cp.Name, karmada.MultiClusterServices.GroupVersion(), mcsapi.Group)
	}
	return cp, nil
}

// Read lists every resource once, concurrently.
func (cp *KarmadaControlPlane) Read(ctx context.Context, ns string, chunk int64) (KarmadaInput, error) {
	in := KarmadaInput{ControlPlane: cp.Name}
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
			items, err := ListAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]unstructured.Unstructured, string, error) {
				var l *unstructured.UnstructuredList
				var err error
				if namespaced {
					l, err = cp.Dyn.Resource(*gvr).Namespace(ns).List(ctx, o)
				} else {
					l, err = cp.Dyn.Resource(*gvr).List(ctx, o)
				}
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.GetContinue(), nil
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("cluster %q: listing %s: %v", cp.Name, gvr.GroupResource(), err))
				return
			}
			*into = Pointers(items)
		}()
	}
	var pps, cpps []*unstructured.Unstructured
	list(cp.MCS, true, &in.MultiClusterServices)
	list(cp.Exports, true, &in.ServiceExports)
	list(cp.Imports, true, &in.ServiceImports)
	list(cp.PPs, true, &pps)
	list(cp.CPPs, false, &cpps)
	wg.Add(1)
	go func() {
		defer wg.Done()
		svcs, err := ListAll(ctx, chunk, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Service, string, error) {
			l, err := cp.Kube.CoreV1().Services(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %q: listing services: %v", cp.Name, err))
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
