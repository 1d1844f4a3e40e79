package corednshost

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
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
	in, err := corefile.Apply(kubeadm, corefile.DefaultDomain, corefile.Upstream{Addr: "10.96.0.53", Service: "kubectl-mcs-system/kubectl-mcs-dns"})
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
		"clusterset.local:15353 {\n    bind 127.0.0.1\n    errors\n    cache 5 {\n        disable denial\n    }\n    forward . 10.96.0.53:53 { # service kubectl-mcs-system/kubectl-mcs-dns\n        force_tcp\n    }\n}\n",
		"forward . /etc/resolv.conf {\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, gone := range []string{"health", "lameduck", "ready", "prometheus", ".:53 {", "clusterset.local:53 {"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q must be gone from\n%s", gone, out)
		}
	}
	// Our block is carried over unchanged apart from the port.
	if !corefile.Has(out) || strings.Count(out, "kubeconfig") != 1 {
		t.Errorf("our block is lost, or got a kubernetes stanza:\n%s", out)
	}
	if _, err := corefile.Parse(out); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	// The DNS server runs on the host: only our block's forward changes.
	host, err := WithForward(out, "127.0.0.1:25353")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(out, "    forward . 10.96.0.53:53 { # service kubectl-mcs-system/kubectl-mcs-dns\n", "    forward . 127.0.0.1:25353 {\n", 1); host != want {
		t.Errorf("WithForward:\n%s\nwant\n%s", host, want)
	}
	if up, err := corefile.Forward(host); err != nil || up.Addr != "127.0.0.1:25353" {
		t.Errorf("Forward(WithForward) = %+v, %v", up, err)
	}
	if _, err := WithForward(kubeadm, "127.0.0.1:25353"); err == nil {
		t.Error("WithForward of a Corefile without our block must fail")
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
