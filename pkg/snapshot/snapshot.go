// Package snapshot holds what was read from one member cluster, the one shape in which `sync`'s
// engine and `status` both take it, and the one index over it; and what was read from a Karmada
// control plane. It is pure: reading is pkg/member's.
package snapshot

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// Key names a service (and every object named after it) in a namespace.
type Key = types.NamespacedName

// The kinds of the objects MCS reads and writes: what the member layer's handlers are told, what
// sync's plans and reports name (an export's status write is a ServiceExport with the verb status).
const (
	KindService       = "Service"
	KindEndpointSlice = "EndpointSlice"
	KindServiceExport = "ServiceExport"
	KindServiceImport = "ServiceImport"
	KindNamespace     = "Namespace"
)

// Objects are one member's objects of the kinds MCS reads, in the namespace read (or all).
type Objects struct {
	// Namespaces are the namespaces that exist there (for sync: that can hold imports).
	Namespaces []string

	ServiceExports []*mcsv1beta1.ServiceExport
	ServiceImports []*mcsv1beta1.ServiceImport
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	// Topology is the zones of the member's nodes; nil when they were not read.
	Topology *Topology
}

// IsCopy says whether a slice was made by an MCS controller for an imported service: ours (our
// manager label) or another's (a multi-cluster service name and a source cluster). A copy is
// never a source: exporting it again would loop.
func IsCopy(s *discoveryv1.EndpointSlice) bool {
	return names.IsManaged(s.Labels) ||
		(s.Labels[mcsv1beta1.LabelServiceName] != "" && s.Labels[mcsv1beta1.LabelSourceCluster] != "")
}

// ServiceOf is the service a slice belongs to: the multi-cluster service a copy was made for, or
// the Service (kubernetes.io/service-name) whose endpoints a source slice holds; "" for neither.
func ServiceOf(s *discoveryv1.EndpointSlice) (name string, copied bool) {
	if IsCopy(s) {
		return s.Labels[mcsv1beta1.LabelServiceName], true
	}
	return s.Labels[discoveryv1.LabelServiceName], false
}

// Index is one member's objects by namespace/name.
type Index struct {
	Namespaces map[string]bool
	// Exports are every ServiceExport, terminating ones included.
	Exports  map[Key]*mcsv1beta1.ServiceExport
	Imports  map[Key]*mcsv1beta1.ServiceImport
	Services map[Key]*corev1.Service
	Slices   map[Key]*discoveryv1.EndpointSlice
	// Sources are the slices of the member's own Services, by Service, sorted by name.
	Sources map[Key][]*discoveryv1.EndpointSlice
	// Copies are the slices of imported services (IsCopy), by multi-cluster service, sorted by
	// name.
	Copies map[Key][]*discoveryv1.EndpointSlice
}

// NewIndex indexes o.
func NewIndex(o *Objects) *Index {
	ix := &Index{Namespaces: make(map[string]bool, len(o.Namespaces)),
		Exports: make(map[Key]*mcsv1beta1.ServiceExport, len(o.ServiceExports)), Imports: make(map[Key]*mcsv1beta1.ServiceImport, len(o.ServiceImports)),
		Services: make(map[Key]*corev1.Service, len(o.Services)), Slices: make(map[Key]*discoveryv1.EndpointSlice, len(o.EndpointSlices)),
		Sources: map[Key][]*discoveryv1.EndpointSlice{}, Copies: map[Key][]*discoveryv1.EndpointSlice{}}
	for _, n := range o.Namespaces {
		ix.Namespaces[n] = true
	}
	for _, x := range o.ServiceExports {
		ix.Exports[Key{Namespace: x.Namespace, Name: x.Name}] = x
	}
	for _, x := range o.ServiceImports {
		ix.Imports[Key{Namespace: x.Namespace, Name: x.Name}] = x
	}
	for _, x := range o.Services {
		ix.Services[Key{Namespace: x.Namespace, Name: x.Name}] = x
	}
	for _, s := range o.EndpointSlices {
		ix.Slices[Key{Namespace: s.Namespace, Name: s.Name}] = s
		svc, copied := ServiceOf(s)
		if svc == "" {
			continue
		}
		k := Key{Namespace: s.Namespace, Name: svc}
		if copied {
			ix.Copies[k] = append(ix.Copies[k], s)
		} else {
			ix.Sources[k] = append(ix.Sources[k], s)
		}
	}
	for _, m := range []map[Key][]*discoveryv1.EndpointSlice{ix.Sources, ix.Copies} {
		for _, l := range m {
			sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
		}
	}
	return ix
}
