package install

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

func TestDNSServerObjects(t *testing.T) {
	objs := DNSServerObjects(DNSServerConfig{Image: "img:1"})
	if got := kinds(objs); !slices.Equal(got, []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service"}) {
		t.Fatalf("objects: %v", got)
	}
	cr := objs[2].(*rbacv1.ClusterRole)
	if cr.Name != names.DNSServerName || !reflect.DeepEqual(cr.Rules, rbac.PolicyRules(rbac.DNSServerRules, rbac.Cluster)) {
		t.Errorf("ClusterRole: %+v", cr)
	}
	crb := objs[3].(*rbacv1.ClusterRoleBinding)
	if crb.RoleRef.Name != cr.Name || crb.Subjects[0].Name != names.DNSServerName || crb.Subjects[0].Namespace != names.SystemNamespace {
		t.Errorf("binding: %+v", crb)
	}
	d := objs[4].(*appsv1.Deployment)
	pod := d.Spec.Template.Spec
	ctr := pod.Containers[0]
	if *d.Spec.Replicas != 2 || d.Namespace != names.SystemNamespace || ctr.Image != "img:1" || pod.ServiceAccountName != names.DNSServerName {
		t.Errorf("deployment: replicas %d, namespace %s, image %s, sa %s", *d.Spec.Replicas, d.Namespace, ctr.Image, pod.ServiceAccountName)
	}
	if pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken {
		t.Error("the DNS server reads its member with the ServiceAccount's token")
	}
	if !slices.Equal(ctr.Args, []string{"dns-server", "--listen=:5353", "--health-probe-bind-address=:8081"}) {
		t.Errorf("args %v", ctr.Args)
	}
	if p := ctr.ReadinessProbe.HTTPGet; p.Path != "/readyz" || p.Port.StrVal != "health" {
		t.Errorf("readiness %+v", p)
	}
	if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Error("the Deployment's selector does not select its pods")
	}
	svc := objs[5].(*corev1.Service)
	if svc.Name != names.DNSServerName || svc.Namespace != names.SystemNamespace || svc.Spec.Type != corev1.ServiceTypeClusterIP ||
		!labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("service %+v", svc)
	}
	ports := map[string]corev1.ContainerPort{}
	for _, p := range ctr.Ports {
		ports[p.Name] = p
	}
	for _, p := range svc.Spec.Ports {
		cp, ok := ports[p.TargetPort.StrVal]
		if p.Port != 53 || !ok || cp.Protocol != p.Protocol || cp.ContainerPort != DNSServerPort {
			t.Errorf("service port %+v does not reach the container's %+v", p, cp)
		}
	}
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Protocol == svc.Spec.Ports[1].Protocol {
		t.Errorf("port 53 over UDP and TCP: %+v", svc.Spec.Ports)
	}
	if _, err := Unstructured(objs); err != nil {
		t.Fatal(err)
	}
	other := DNSServerObjects(DNSServerConfig{Image: "img:1", Domain: "mcs.example", TTL: 30})[4].(*appsv1.Deployment)
	if args := other.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--dns-domain=mcs.example") || !slices.Contains(args, "--ttl=30") {
		t.Errorf("a non-default zone and TTL are passed on: %v", args)
	}
}
