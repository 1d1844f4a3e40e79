package member

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// Joined is a member whose caches hold objs (typed; an export or import may be unstructured,
// as a cache holds one that does not decode), joined and reachable, serving mcs-api version: for
// callers that hold the objects already, and tests.
func Joined(cm *clusterset.Connection, version string, objs ...any) (*Cache, error) {
	m := New([]*clusterset.Connection{cm}, Config{})[0]
	byNS := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	svcs, nss := byNS(), byNS()
	m.exports, m.imports = byNS(), byNS()
	m.slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, sliceIndex: sliceKeys})
	for _, o := range objs {
		var into cache.Indexer
		switch o := o.(type) {
		case *corev1.Service:
			into = svcs
		case *corev1.Namespace:
			into = nss
		case *discoveryv1.EndpointSlice:
			into = m.slices
		case *mcsv1beta1.ServiceExport:
			into = m.exports
		case *mcsv1beta1.ServiceImport:
			into = m.imports
		case *record: // as sync's caches hold what it wrote
			into = map[uint8]cache.Indexer{recordService: svcs, recordSlice: m.slices, recordImport: m.imports}[o.kind]
		case interface{ GetKind() string }:
			switch o.GetKind() {
			case mcsv1beta1.ServiceExportKindName:
				into = m.exports
			case mcsv1beta1.ServiceImportKindName:
				into = m.imports
			}
		}
		if into == nil {
			return nil, fmt.Errorf("member %q: cannot hold a %T", cm.ID, o)
		}
		if err := into.Add(o); err != nil {
			return nil, err
		}
	}
	m.services, m.namespaces = svcs, corelisters.NewNamespaceLister(nss)
	m.joined, m.attempted, m.reachable, m.err, m.version = true, true, true, nil, version
	return m, nil
}
