package dnszone

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// State is a Source held in maps: what a member holds, for tests and one-shot callers.
type State struct {
	imports    map[types.NamespacedName]*mcsv1beta1.ServiceImport
	namespaces map[string]bool
	slices     map[types.NamespacedName][]*discoveryv1.EndpointSlice
}

// NewState indexes imports by namespace/name and slices by their multi-cluster service.
func NewState(imports []*mcsv1beta1.ServiceImport, slices []*discoveryv1.EndpointSlice) *State {
	s := &State{imports: map[types.NamespacedName]*mcsv1beta1.ServiceImport{}, namespaces: map[string]bool{},
		slices: map[types.NamespacedName][]*discoveryv1.EndpointSlice{}}
	for _, i := range imports {
		s.imports[types.NamespacedName{Namespace: i.Namespace, Name: i.Name}] = i
		s.namespaces[i.Namespace] = true
	}
	for _, sl := range slices {
		k := types.NamespacedName{Namespace: sl.Namespace, Name: sl.Labels[mcsv1beta1.LabelServiceName]}
		s.slices[k] = append(s.slices[k], sl)
	}
	return s
}

func (s *State) Import(namespace, name string) *mcsv1beta1.ServiceImport {
	return s.imports[types.NamespacedName{Namespace: namespace, Name: name}]
}

func (s *State) HasImports(namespace string) bool { return s.namespaces[namespace] }

func (s *State) Slices(namespace, name string) []*discoveryv1.EndpointSlice {
	return s.slices[types.NamespacedName{Namespace: namespace, Name: name}]
}
