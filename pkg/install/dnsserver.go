package install

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// DNSServerPort is where the DNS server listens in its pod (53 needs a capability); the Service
// maps port 53 to it.
const DNSServerPort = 5353

// DNSServerConfig is what `dns-server --print-manifests` generates from. Domain and TTL are
// passed on only when they differ from the DNS server's defaults.
type DNSServerConfig struct {
	Image    string
	Replicas int32
	Domain   string
	TTL      uint32
}

// DNSServerArgs are the deployed DNS server's arguments.
func DNSServerArgs(c DNSServerConfig) []string {
	args := []string{"dns-server", fmt.Sprintf("--listen=:%d", DNSServerPort), fmt.Sprintf("--health-probe-bind-address=:%d", HealthPort)}
	if c.Domain != "" {
		args = append(args, "--dns-domain="+c.Domain)
	}
	if c.TTL != 0 {
		args = append(args, fmt.Sprintf("--ttl=%d", c.TTL))
	}
	return args
}

// DNSServerObjects is what runs the DNS server in one member, in names.SystemNamespace: the
// Namespace, a ServiceAccount with DNSServerRules (read-only), a Deployment of two replicas
// reading the member with that ServiceAccount's token, and the Service whose ClusterIP
// `init --dns` makes CoreDNS forward the zone to (port 53, UDP and TCP).
func DNSServerObjects(c DNSServerConfig) []runtime.Object {
	ns, name := names.SystemNamespace, names.DNSServerName
	m := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: appLabels(name)}
	}
	container := corev1.Container{
		Name:  "dns-server",
		Image: c.Image,
		Args:  DNSServerArgs(c),
		Ports: []corev1.ContainerPort{{Name: "dns", ContainerPort: DNSServerPort, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", ContainerPort: DNSServerPort, Protocol: corev1.ProtocolTCP},
			{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: m(ns),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{appLabel: name},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", Port: 53, TargetPort: intstr.FromString("dns-tcp"), Protocol: corev1.ProtocolTCP},
			},
		},
	}
	return []runtime.Object{
		namespaceObject(ns),
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: m(ns)},
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: m(""), Rules: rbac.PolicyRules(rbac.DNSServerRules, rbac.Cluster)},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: m(""), Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
		deployment(name, ns, c.Replicas, container),
		svc,
	}
}
