package member

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// ServiceOf is the service an object concerns: a derived Service's or a slice's multi-cluster
// service, else the object's own name (a slice: its Service's).
func ServiceOf(obj any) types.NamespacedName {
	switch o := obj.(type) {
	case *corev1.Service:
		if n := o.Labels[mcsv1beta1.LabelServiceName]; n != "" && names.IsManaged(o.Labels) {
			return types.NamespacedName{Namespace: o.Namespace, Name: n}
		}
		return types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
	case *discoveryv1.EndpointSlice:
		n, _ := snapshot.ServiceOf(o)
		if n == "" {
			return types.NamespacedName{}
		}
		return types.NamespacedName{Namespace: o.Namespace, Name: n}
	case interface {
		GetNamespace() string
		GetName() string
	}:
		return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	}
	return types.NamespacedName{}
}
