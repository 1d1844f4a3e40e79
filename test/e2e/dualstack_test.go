//go:build e2e

package e2e

import (
	"context"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
