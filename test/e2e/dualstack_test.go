//go:build e2e

package e2e

import (
	"context"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTestbedDualStack: the test bed's dual-stack member is what DEVELOPERS.md says: a
// PreferDualStack Service gets an IPv4 and an IPv6 cluster IP, pods get one IP of each family,
// and the EndpointSlice controller writes an IPv4 and an IPv6 slice.
func TestTestbedDualStack(t *testing.T) {
	c := dualStack
	ns := namespace(t, "e2e-dualstack", c)
	deployment(t, c, ns, "serve", 2)
	prefer := corev1.IPFamilyPolicyPreferDualStack
	svc := service(t, c, ns, "serve", func(s *corev1.Service) { s.Spec.IPFamilyPolicy = &prefer })
	if fams := families(t, svc.Spec.ClusterIPs); len(fams) != 2 || fams[0] != "IPv4" || fams[1] != "IPv6" {
		t.Errorf("%s: PreferDualStack Service: clusterIPs %v, ipFamilies %v; want IPv4 and IPv6", c, svc.Spec.ClusterIPs, svc.Spec.IPFamilies)
	}
	pods, err := clients[c].kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=serve"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		var ips []string
		for _, ip := range p.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		if fams := families(t, ips); len(fams) != 2 || fams[0] == fams[1] {
			t.Errorf("%s: pod %s: podIPs %v, want one IPv4 and one IPv6", c, p.Name, ips)
		}
	}
	waitFor(t, "IPv4 and IPv6 EndpointSlices with both pods", func() bool {
		l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=serve"})
		if err != nil {
			t.Fatal(err)
		}
		n := map[discoveryv1.AddressType]int{}
		for _, s := range l.Items {
			n[s.AddressType] += len(s.Endpoints)
		}
		return n[discoveryv1.AddressTypeIPv4] == 2 && n[discoveryv1.AddressTypeIPv6] == 2
	})
}

// families is the IP family of each address, in order.
func families(t *testing.T, ips []string) []string {
	t.Helper()
	var out []string
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if a.Is4() {
			out = append(out, "IPv4")
		} else {
			out = append(out, "IPv6")
		}
	}
	return out
}

// Issue "sync you can trust", 6: a PreferDualStack export gets one import IP per family, from a
// derived Service that asks for those families where the cluster has them, and the primary family
// alone (no failed create) where it has not.
func TestTrustDualStackImport(t *testing.T) {
	ns := namespace(t, "e2e-ds-import", dualStack, "member1")
	deployment(t, dualStack, ns, "serve", 1)
	prefer := corev1.IPFamilyPolicyPreferDualStack
	service(t, dualStack, ns, "serve", func(s *corev1.Service) { s.Spec.IPFamilyPolicy = &prefer })
	userExport(t, dualStack, ns, "serve")
	mustMCS(t, "sync", "-n", ns, "--contexts", dualStack+",member1")
	importFamilies(t, ns, "serve", map[string][]string{dualStack: {"IPv4", "IPv6"}, "member1": {"IPv4"}})
	// Both families' endpoints reach the dual-stack importer.
	if got := families(t, importedIPs(t, dualStack, ns, "serve", dualStack)); len(got) != 2 {
		t.Errorf("imported endpoint families %v, want IPv4 and IPv6", got)
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", dualStack+",member1"); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("second pass wrote:\n%s", r.stdout)
	}
}

// importFamilies checks in each member of want that the derived Service of name got one cluster
// IP of each family want names, in order, and that the import lists those IPs and families.
func importFamilies(t *testing.T, ns, name string, want map[string][]string) {
	t.Helper()
	for c, want := range want {
		d := derivedService(t, c, ns, name)
		if d == nil {
			t.Fatalf("%s: no derived Service", c)
		}
		if got := families(t, d.Spec.ClusterIPs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: derived Service clusterIPs %v (%v), want families %v", c, d.Spec.ClusterIPs, got, want)
		}
		si := get(t, c, siGVR("v1beta1"), ns, name)
		ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		fams, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ipFamilies")
		if !reflect.DeepEqual(ips, d.Spec.ClusterIPs) || !reflect.DeepEqual(fams, want) {
			t.Errorf("%s: import ips %v families %v, want %v and %v", c, ips, fams, d.Spec.ClusterIPs, want)
		}
	}
}
