package member

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// watches says whether the caches hold kind (Config.Kinds).
func (c Config) watches(kind string) bool {
	if c.Kinds == nil {
		return true
	}
	for _, k := range c.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// own says whether the member is one whose objects this reader decides: every member, or under
// Config.Local that one alone.
func (m *Cache) own() bool { return m.cfg.Local == "" || m.Context == m.cfg.Local }

func joinSelectors(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// informers builds, in factories not started yet (start starts them), the informers of the kinds
// Config.Kinds names, each with its transform, the slices with their index and, if set,
// Config.SliceSelector; under Config.Local, another member's without what kubectl-mcs manages. The Cache's stores become theirs; a kind not watched gets an empty store,
// so that what reads it finds nothing rather than a nil store.
func (m *Cache) informers(kc kubernetes.Interface, dc dynamic.Interface, version string) (map[string]cache.SharedIndexInformer, func(<-chan struct{}), error) {
	ns := m.cfg.Namespace
	kf := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(ns))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, ns, nil)
	sliceSel, serviceSel := m.cfg.SliceSelector, ""
	if !m.own() {
		sliceSel, serviceSel = joinSelectors(sliceSel, names.NotManagedSelector), names.NotManagedSelector
	}
	// Registered first, so that the factory's informers of these kinds are these ones.
	if sliceSel != "" {
		kf.InformerFor(&discoveryv1.EndpointSlice{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return discoveryinformers.NewFilteredEndpointSliceInformer(c, ns, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
				func(o *metav1.ListOptions) { o.LabelSelector = sliceSel })
		})
	}
	if serviceSel != "" {
		kf.InformerFor(&corev1.Service{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredServiceInformer(c, ns, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
				func(o *metav1.ListOptions) { o.LabelSelector = serviceSel })
		})
	}
	build := map[string]func() cache.SharedIndexInformer{
		snapshot.KindService:       func() cache.SharedIndexInformer { return kf.Core().V1().Services().Informer() },
		snapshot.KindEndpointSlice: func() cache.SharedIndexInformer { return kf.Discovery().V1().EndpointSlices().Informer() },
		snapshot.KindNamespace:     func() cache.SharedIndexInformer { return kf.Core().V1().Namespaces().Informer() },
		snapshot.KindServiceExport: func() cache.SharedIndexInformer {
			return df.ForResource(mcsapi.GVR(version, mcsapi.ServiceExports)).Informer()
		},
		snapshot.KindServiceImport: func() cache.SharedIndexInformer {
			return df.ForResource(mcsapi.GVR(version, mcsapi.ServiceImports)).Informer()
		},
	}
	// Decoded once as they arrive rather than on every read, and trimmed.
	tf := transforms(m.cfg.FieldManager)
	infs, stores := map[string]cache.SharedIndexInformer{}, map[string]cache.Indexer{}
	for kind, inf := range build {
		if !m.cfg.watches(kind) {
			stores[kind] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, sliceIndex: sliceKeys})
			continue
		}
		i := inf()
		if err := i.SetTransform(tf[kind]); err != nil {
			return nil, nil, err
		}
		if kind == snapshot.KindEndpointSlice {
			if err := i.AddIndexers(cache.Indexers{sliceIndex: sliceKeys}); err != nil {
				return nil, nil, err
			}
		}
		infs[kind], stores[kind] = i, i.GetIndexer()
	}
	m.services, m.slices, m.exports, m.imports = stores[snapshot.KindService], stores[snapshot.KindEndpointSlice], stores[snapshot.KindServiceExport], stores[snapshot.KindServiceImport]
	m.namespaces = corelisters.NewNamespaceLister(stores[snapshot.KindNamespace])
	return infs, func(stop <-chan struct{}) { kf.Start(stop); df.Start(stop) }, nil
}
