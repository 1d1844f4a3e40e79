package engine

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

var (
	t0  = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now = metav1.NewTime(t0.Add(24 * time.Hour))
)

func at(min int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(min) * time.Minute)) }

func ptr[T any](v T) *T { return &v }

func mkExport(ns, name string, created int) *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		CreationTimestamp: at(created), Generation: 1}}
}

func mkService(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports, Selector: map[string]string{"app": name}}}
}

func mkSlice(ns, svc, name string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)},
			NodeName:   ptr("node-1"), TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p-" + a}, Zone: ptr("z1")})
	}
	return s
}

// member is a reachable cluster with namespace "demo" and the given objects.
func member(id string, objs ...any) ObservedCluster {
	c := ObservedCluster{ID: id, Reachable: true, Objects: snapshot.Objects{Namespaces: []string{"default", "demo"}}}
	for _, o := range objs {
		switch o := o.(type) {
		case *mcsv1beta1.ServiceExport:
			c.ServiceExports = append(c.ServiceExports, o)
		case *corev1.Service:
			c.Services = append(c.Services, o)
		case *discoveryv1.EndpointSlice:
			c.EndpointSlices = append(c.EndpointSlices, o)
		case *mcsv1beta1.ServiceImport:
			c.ServiceImports = append(c.ServiceImports, o)
		default:
			panic(fmt.Sprintf("unknown object %T", o))
		}
	}
	return c
}

func findCond(conds []metav1.Condition, t mcsv1beta1.ServiceExportConditionType) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == string(t) {
			return &conds[i]
		}
	}
	return nil
}

func nn(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

func findImport(cd *ClusterDesired, ns, name string) *mcsv1beta1.ServiceImport {
	for _, o := range cd.ServiceImports {
		if o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func findService(cd *ClusterDesired, ns, name string) *corev1.Service {
	for _, o := range cd.Services {
		if o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

// apply plays acts against obs the way an apiserver would: it assigns UIDs, allocates cluster
// IPs, fills defaults, drops status on create (a subresource for the MCS CRDs) and keeps
// immutable and server-owned fields on update.
func apply(obs *Observed, acts []Action) {
	for _, a := range acts {
		var c *ObservedCluster
		for i := range obs.Clusters {
			if obs.Clusters[i].ID == a.Cluster {
				c = &obs.Clusters[i]
			}
		}
		if c == nil || !c.Reachable {
			panic("action for unknown or unreachable cluster " + a.Cluster)
		}
		uid := types.UID("uid-" + names.Hash(a.Cluster+a.Kind+a.Namespace+a.Name))
		switch a.Kind {
		case snapshot.KindServiceImport:
			i := indexOf(c.ServiceImports, a.Namespace, a.Name)
			switch a.Verb {
			case VerbDelete:
				c.ServiceImports = remove(c.ServiceImports, i)
			case VerbCreate:
				o := a.Object.(*mcsv1beta1.ServiceImport).DeepCopy()
				o.UID, o.Status = uid, mcsv1beta1.ServiceImportStatus{}
				c.ServiceImports = append(c.ServiceImports, o)
			case VerbUpdate:
				o := a.Object.(*mcsv1beta1.ServiceImport).DeepCopy()
				o.UID, o.Status = c.ServiceImports[i].UID, c.ServiceImports[i].Status
				c.ServiceImports[i] = o
			case VerbStatus:
				c.ServiceImports[i] = c.ServiceImports[i].DeepCopy()
				c.ServiceImports[i].Status = a.Object.(*mcsv1beta1.ServiceImport).Status
			}
		case snapshot.KindService:
			i := indexOf(c.Services, a.Namespace, a.Name)
			switch a.Verb {
			case VerbDelete:
				c.Services = remove(c.Services, i)
			case VerbCreate:
				o := a.Object.(*corev1.Service).DeepCopy()
				o.UID = uid
				defaultService(o)
				c.Services = append(c.Services, o)
			case VerbUpdate:
				o := a.Object.(*corev1.Service).DeepCopy()
				o.UID, o.Spec.ClusterIP, o.Spec.ClusterIPs = c.Services[i].UID, c.Services[i].Spec.ClusterIP, c.Services[i].Spec.ClusterIPs
				defaultService(o)
				c.Services[i] = o
			}
		case snapshot.KindEndpointSlice:
			i := indexOf(c.EndpointSlices, a.Namespace, a.Name)
			switch a.Verb {
			case VerbDelete:
				c.EndpointSlices = remove(c.EndpointSlices, i)
			case VerbCreate, VerbUpdate:
				o := a.Object.(*discoveryv1.EndpointSlice).DeepCopy()
				o.UID = uid
				for j := range o.Ports {
					if o.Ports[j].Protocol == nil {
						o.Ports[j].Protocol = ptr(corev1.ProtocolTCP)
					}
				}
				if a.Verb == VerbCreate {
					c.EndpointSlices = append(c.EndpointSlices, o)
				} else {
					c.EndpointSlices[i] = o
				}
			}
		case snapshot.KindServiceExport:
			i := indexOf(c.ServiceExports, a.Namespace, a.Name)
			c.ServiceExports[i] = c.ServiceExports[i].DeepCopy()
			c.ServiceExports[i].Status = a.Object.(*mcsv1beta1.ServiceExport).Status
		}
	}
}

func defaultService(s *corev1.Service) {
	if s.Spec.ClusterIP == "" {
		h := names.Hash(string(s.UID))
		s.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", h[0], h[1])
	}
	s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	// A single-stack cluster of whichever family was asked for (a real one refuses the other).
	if len(s.Spec.IPFamilies) == 0 {
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	s.Spec.IPFamilies = s.Spec.IPFamilies[:1]
	if s.Spec.IPFamilyPolicy == nil {
		s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
	}
	defaultServiceFields(s)
	s.ResourceVersion = "42"
}

// defaultServiceFields are the apiserver's defaults of a Service's affinity, internal traffic
// policy and port protocols.
func defaultServiceFields(s *corev1.Service) {
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP && s.Spec.SessionAffinityConfig == nil {
		s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(10800))}}
	}
	if s.Spec.InternalTrafficPolicy == nil {
		s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
	}
	for i := range s.Spec.Ports {
		if s.Spec.Ports[i].Protocol == "" {
			s.Spec.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

type namedObj interface {
	GetNamespace() string
	GetName() string
}

func indexOf[T namedObj](list []T, ns, name string) int {
	for i, o := range list {
		if o.GetNamespace() == ns && o.GetName() == name {
			return i
		}
	}
	return -1 // only create may miss; any other verb then panics on the index
}

func remove[T any](list []T, i int) []T {
	return append(append([]T(nil), list[:i]...), list[i+1:]...)
}

// converge runs Compute/Plan/apply until Plan is empty and returns the number of passes that wrote.
func converge(obs *Observed, max int) (int, []Action) {
	for i := 0; i < max; i++ {
		acts := Plan(*obs, Compute(*obs))
		if len(acts) == 0 {
			return i, nil
		}
		apply(obs, acts)
	}
	return max, Plan(*obs, Compute(*obs))
}
