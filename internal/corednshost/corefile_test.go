package corednshost

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/dns"
)

// kubeadm is the Corefile kubeadm writes into kube-system/coredns, as the test bed gives it.
var kubeadm = func() string {
	b, err := os.ReadFile("../../test/testbed/kubeadm.Corefile")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestForHost(t *testing.T) {
	in, err := dns.Apply(kubeadm, dns.DefaultDomain)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ForHost(in, "/tmp/kc", "member2", 15353)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".:15353 {\n    bind 127.0.0.1\n    errors\n",
		"kubernetes cluster.local in-addr.arpa ip6.arpa {\n        kubeconfig /tmp/kc member2\n       pods insecure\n",
		"clusterset.local:15353 {\n    bind 127.0.0.1\n",
		"    kubernetes cluster.local {\n        kubeconfig /tmp/kc member2\n        ttl 5\n",
		"forward . /etc/resolv.conf {\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, gone := range []string{"health", "lameduck", "ready", "prometheus", ":53 "} {
		if strings.Contains(out, gone) {
			t.Errorf("%q must be gone from\n%s", gone, out)
		}
	}
	// Our block is carried over unchanged apart from the port and connection lines.
	if !dns.Has(out) || strings.Count(out, "rewrite stop") != 1 {
		t.Errorf("our block is lost:\n%s", out)
	}
	if _, err := dns.Parse(out); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
}

func TestForHostKubernetesWithoutBlock(t *testing.T) {
	out, err := ForHost("cluster.local {\n    kubernetes cluster.local\n}\n", "/k", "c", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "cluster.local:1 {\n    bind 127.0.0.1\n    kubernetes cluster.local {\n        kubeconfig /k c\n    }\n}\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
