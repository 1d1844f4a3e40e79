package member

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// What the DNS server reads of a member (pkg/dnszone's Source): its imports and the copies made
// for them.

// CopiesOf are the slices labelled as made for multi-cluster service ns/name
// (multicluster.kubernetes.io/service-name), whoever made them.
func (m *Cache) CopiesOf(ns, name string) []*discoveryv1.EndpointSlice {
	l, _ := m.slices.ByIndex(sliceIndex, ns+"/mcs/"+name)
	return listAs[discoveryv1.EndpointSlice](l)
}

// HasImports says whether namespace ns holds a ServiceImport.
func (m *Cache) HasImports(ns string) bool {
	keys, _ := m.imports.IndexKeys(cache.NamespaceIndex, ns)
	return len(keys) > 0
}

// Held is how many objects of kind (snapshot.Kind*, not Namespace) the caches hold.
func (m *Cache) Held(kind string) int {
	s := map[string]cache.Indexer{snapshot.KindService: m.services, snapshot.KindEndpointSlice: m.slices,
		snapshot.KindServiceExport: m.exports, snapshot.KindServiceImport: m.imports}[kind]
	if s == nil {
		return 0
	}
	return len(s.ListKeys())
}
