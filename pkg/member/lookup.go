package member

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// What one service's decision reads from a joined member's caches, without a scan.

// sliceIndex finds a service's slices without scanning the namespace: a source slice under
// "ns/src/SERVICE" (kubernetes.io/service-name), an MCS copy under "ns/mcs/SERVICE". A copy whose
// Service is the derived Service of its multi-cluster service (every copy of ours that nobody
// edited) is found under "ns/mcs/SERVICE" alone: SlicesOf asks for both, and each key costs
// each service a set of its own in every member.
const sliceIndex = "service"

func sliceKeys(obj any) ([]string, error) {
	var ns, src, mcs string
	switch s := obj.(type) {
	case *discoveryv1.EndpointSlice:
		ns, src, mcs = s.Namespace, s.Labels[discoveryv1.LabelServiceName], s.Labels[mcsv1beta1.LabelServiceName]
	case *record:
		ns, src, mcs = s.namespace, s.label(discoveryv1.LabelServiceName), s.label(mcsv1beta1.LabelServiceName)
	default:
		return nil, nil
	}
	var out []string
	if src != "" && (mcs == "" || src != names.DerivedServiceName(mcs)) {
		out = append(out, ns+"/src/"+src)
	}
	if mcs != "" {
		out = append(out, ns+"/mcs/"+mcs)
	}
	return out, nil
}

// Namespace is the namespace name, if it exists.
func (m *Cache) Namespace(name string) (*corev1.Namespace, error) { return m.namespaces.Get(name) }

// SystemUID is the UID of the member's kube-system namespace: the cluster's own identity, which
// no change of its cluster ID touches (KEP-2149); "" while the cache does not hold it.
func (m *Cache) SystemUID() string {
	if n, err := m.Namespace(metav1.NamespaceSystem); err == nil {
		return string(n.UID)
	}
	return ""
}

// Service is the Service ns/name, if it exists.
func (m *Cache) Service(ns, name string) (*corev1.Service, error) {
	s, err := cachedAs[corev1.Service](m.services, ns+"/"+name)
	if err == nil && s == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("services"), name)
	}
	return s, err
}

// Export is the ServiceExport ns/name: nil when there is none, an error when it does not decode.
func (m *Cache) Export(ns, name string) (*mcsv1beta1.ServiceExport, error) {
	return decode.Cached[mcsv1beta1.ServiceExport](m.exports, ns+"/"+name)
}

// Import is the ServiceImport ns/name, as Export.
func (m *Cache) Import(ns, name string) (*mcsv1beta1.ServiceImport, error) {
	return cachedAs[mcsv1beta1.ServiceImport](m.imports, ns+"/"+name)
}

// SlicesOf are the slices that concern service ns/name: its Service's, its derived Service's,
// and the copies made for it.
func (m *Cache) SlicesOf(ns, name string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	seen := map[string]bool{}
	for _, k := range []string{ns + "/src/" + name, ns + "/src/" + names.DerivedServiceName(name), ns + "/mcs/" + name} {
		l, _ := m.slices.ByIndex(sliceIndex, k)
		for _, s := range listAs[discoveryv1.EndpointSlice](l) {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// Keys lists every service the member's caches say needs a decision: exported ones and those
// that still have objects of ours; in namespace ns, or in all of them when ns is "".
func (m *Cache) Keys(ns string) []types.NamespacedName {
	seen := map[types.NamespacedName]bool{}
	add := func(objNS, n string) {
		if ns == "" || objNS == ns {
			seen[types.NamespacedName{Namespace: objNS, Name: n}] = true
		}
	}
	in := func(store cache.Indexer) []any {
		if ns != "" {
			if l, err := store.ByIndex(cache.NamespaceIndex, ns); err == nil {
				return l
			}
		}
		return store.List()
	}
	for _, o := range in(m.exports) {
		if a, err := meta.Accessor(o); err == nil {
			add(a.GetNamespace(), a.GetName())
		}
	}
	for _, o := range in(m.imports) {
		if a, err := meta.Accessor(o); err == nil && managedEntry(o) {
			add(a.GetNamespace(), a.GetName())
		}
	}
	for _, o := range in(m.slices) {
		a, err := meta.Accessor(o)
		if n := labelOf(o, mcsv1beta1.LabelServiceName); err == nil && n != "" && labelOf(o, names.EndpointSliceManagedByLabel) == names.EndpointSliceManagedByValue {
			add(a.GetNamespace(), n)
		}
	}
	return slices.Collect(maps.Keys(seen))
}
