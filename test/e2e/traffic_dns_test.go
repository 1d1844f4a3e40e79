//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestPreferSameClusterDNS: a Headless service has no ClusterIP for kube-proxy to keep at home,
// so the member's DNS server does it. db runs in member1 and member2, and member2 prefers its own
// endpoints: member2's DNS server answers db's clusterset name with member2's pods while one is
// ready and with member1's once member2 has none; member1, without the choice, answers both
// clusters' pods throughout. Every endpoint keeps its own name.
func TestPreferSameClusterDNS(t *testing.T) {
	ns := namespace(t, "e2e-prefer-dns", members...)
	// Zones before the pods, as a real cluster's nodes have them.
	zone(t, "member1", "member1-node", "zone-a")
	zone(t, "member2", "member2-node", "zone-b")
	for _, c := range []string{"member1", "member2"} {
		deployment(t, c, ns, "db", 2)
		service(t, c, ns, "db", namedPort, headless)
		waitFor(t, c+"'s endpoints", func() bool { return len(sourceIPs(t, c, ns, "db")) == 2 })
	}
	mustMCS(t, "expose", "db", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "expose", "db", "-n", ns, "--contexts", allMembers, "--providers=member2", "--traffic-distribution=PreferSameCluster")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	// The Headless service's copies in member2 are hinted as a ClusterSetIP's are.
	hints := hintsBySource(t, "member2", ns, "db")
	if want := []string{"zone-b", "zone-b"}; !slices.Equal(hints["member2"], want) {
		t.Errorf("member2's copies of its own endpoints hinted %q, want %q", hints["member2"], want)
	}
	if want := []string{"kubectl-mcs-other-cluster", "kubectl-mcs-other-cluster"}; !slices.Equal(hints["member1"], want) {
		t.Errorf("member2's copies of member1's endpoints hinted %q, want %q", hints["member1"], want)
	}

	name := "db." + ns + ".svc.clusterset.local."
	pods1, pods2 := podIPs(t, "member1", ns, "db"), podIPs(t, "member2", ns, "db")
	both := sorted(append(slices.Clone(pods1), pods2...))
	dns1, dns2 := startDNSServer(t, "member1"), startDNSServer(t, "member2")
	waitAnswer(t, dns2.addr, name, dns.TypeA, dns.RcodeSuccess, pods2)
	waitAnswer(t, dns1.addr, name, dns.TypeA, dns.RcodeSuccess, both)
	var targets []string
	for _, ip := range pods2 {
		targets = append(targets, "8080 "+strings.ReplaceAll(ip, ".", "-")+".member2."+name)
	}
	waitAnswer(t, dns2.addr, "_http._tcp."+name, dns.TypeSRV, dns.RcodeSuccess, sorted(targets))
	// member1's endpoints keep their names in member2.
	for _, ip := range pods1 {
		waitAnswer(t, dns2.addr, strings.ReplaceAll(ip, ".", "-")+".member1."+name, dns.TypeA, dns.RcodeSuccess, []string{ip})
	}

	// member2 without a ready endpoint: every cluster's, member1's; back to its own once it has one.
	if out, err := runKubectl("member2", "-n", ns, "scale", "deployment/db", "--replicas=0"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitFor(t, "member2 without endpoints", func() bool { return len(sourceIPs(t, "member2", ns, "db")) == 0 })
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	waitAnswer(t, dns2.addr, name, dns.TypeA, dns.RcodeSuccess, pods1)
	waitAnswer(t, dns1.addr, name, dns.TypeA, dns.RcodeSuccess, pods1)

	if out, err := runKubectl("member2", "-n", ns, "scale", "deployment/db", "--replicas=1"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitFor(t, "member2's endpoint back", func() bool { return len(sourceIPs(t, "member2", ns, "db")) == 1 })
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	pods2 = podIPs(t, "member2", ns, "db")
	waitAnswer(t, dns2.addr, name, dns.TypeA, dns.RcodeSuccess, pods2)
	waitAnswer(t, dns1.addr, name, dns.TypeA, dns.RcodeSuccess, sorted(append(slices.Clone(pods1), pods2...)))
}
