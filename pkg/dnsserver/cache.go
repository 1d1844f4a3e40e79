package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// byService indexes slices by NAMESPACE/NAME of their multi-cluster service.
const byService = "multicluster-service"

// caches are the member's ServiceImports (typed by decode.Transform) and the EndpointSlices
// sync wrote, as informers keep them: they hold the last state while the apiserver is away. It
// is the dnszone.Source of the server.
type caches struct {
	imports, slices cache.Indexer
	synced          []cache.InformerSynced
}

// startCaches starts the informers: ServiceImports in the version the member serves, and only
// the EndpointSlices labelled endpointslice.kubernetes.io/managed-by=kubectl-mcs.
func startCaches(ctx context.Context, m *clusterset.Connection, version string) (*caches, error) {
	ours := names.EndpointSliceManagedByLabel + "=" + names.EndpointSliceManagedByValue
	kf := informers.NewSharedInformerFactoryWithOptions(m.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = ours }))
	df := dynamicinformer.NewDynamicSharedInformerFactory(m.Dynamic, 0)
	sliceInf := kf.Discovery().V1().EndpointSlices().Informer()
	importInf := df.ForResource(mcsapi.GVR(version, mcsapi.ServiceImports)).Informer()
	if err := errors.Join(
		sliceInf.AddIndexers(cache.Indexers{byService: serviceKey}),
		sliceInf.SetTransform(slim),
		importInf.SetTransform(func(o any) (any, error) {
			o, err := decode.Transform[mcsv1beta1.ServiceImport](o)
			if err != nil {
				return nil, err
			}
			return slim(o)
		})); err != nil {
		return nil, err
	}
	var denied sync.Map // the refusals said already
	for _, inf := range []cache.SharedIndexInformer{sliceInf, importInf} {
		// The reflector retries quietly; a refusal is a missing permission, said once and loudly.
		_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			if apierrors.IsForbidden(err) {
				if _, said := denied.LoadOrStore(err.Error(), true); !said {
					klog.ErrorS(err, "forbidden: a list or watch was refused; retrying", "cluster", m.ID)
				}
				return
			}
			klog.V(2).InfoS("watch error", "cluster", m.ID, "err", err)
		})
	}
	kf.Start(ctx.Done())
	df.Start(ctx.Done())
	return &caches{imports: importInf.GetIndexer(), slices: sliceInf.GetIndexer(),
		synced: []cache.InformerSynced{sliceInf.HasSynced, importInf.HasSynced}}, nil
}

// slim drops managedFields: nothing here reads them, and they are most of an object's size.
func slim(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

func serviceKey(o any) ([]string, error) {
	s, ok := o.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	if n := s.Labels[mcsv1beta1.LabelServiceName]; n != "" {
		return []string{s.Namespace + "/" + n}, nil
	}
	return nil, nil
}

func (c *caches) hasSynced() bool {
	for _, f := range c.synced {
		if !f() {
			return false
		}
	}
	return true
}

// Import is the ServiceImport NS/NAME; one that does not decode is not served (and logged at -v=2).
func (c *caches) Import(namespace, name string) *mcsv1beta1.ServiceImport {
	si, err := decode.Cached[mcsv1beta1.ServiceImport](c.imports, namespace+"/"+name)
	if err != nil {
		klog.V(2).InfoS("ServiceImport not served", "namespace", namespace, "name", name, "err", err)
		return nil
	}
	return si
}

func (c *caches) HasImports(namespace string) bool {
	keys, _ := c.imports.IndexKeys(cache.NamespaceIndex, namespace)
	return len(keys) > 0
}

func (c *caches) Slices(namespace, name string) []*discoveryv1.EndpointSlice {
	objs, _ := c.slices.ByIndex(byService, namespace+"/"+name)
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out
}

// String names the caches' contents in the log.
func (c *caches) String() string {
	return fmt.Sprintf("%d ServiceImports, %d EndpointSlices", len(c.imports.ListKeys()), len(c.slices.ListKeys()))
}
