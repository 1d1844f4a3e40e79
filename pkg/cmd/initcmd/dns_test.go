package initcmd

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dns"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

var kubeadm = func() string {
	b, err := os.ReadFile("../../../test/testbed/kubeadm.Corefile")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func member(id string, objs ...runtime.Object) *clusterset.Connection {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"}, Data: map[string]string{"Corefile": kubeadm}}
	return &clusterset.Connection{Ref: clusterset.Ref{Context: id + "-ctx", ID: id}, Client: fake.NewClientset(append(objs, cm)...)}
}

func dnsServerService(ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: names.SystemNamespace, Name: names.DNSServerName},
		Spec: corev1.ServiceSpec{ClusterIP: ip}}
}

func options(server string, members ...*clusterset.Connection) *Options {
	return &Options{members: members, DNS: DNSFlags{Enable: true, set: true, Domain: dns.DefaultDomain, Server: server,
		namespace: "kube-system", name: "coredns"}}
}

func TestPlanDNSForwardsToTheDNSServerService(t *testing.T) {
	edits, err := options("", member("member1", dnsServerService("10.96.0.53")), member("member2", dnsServerService("fd00::53"))).planDNS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"forward . 10.96.0.53:53 # service kubectl-mcs-system/kubectl-mcs-dns\n", "forward . [fd00::53]:53 # service kubectl-mcs-system/kubectl-mcs-dns\n"} {
		if got := edits[i].cm.Data["Corefile"]; !edits[i].changed || !strings.Contains(got, want) {
			t.Errorf("%s: want %q in\n%s", edits[i].item.Cluster, want, got)
		}
	}
}

func TestPlanDNSWithDNSServerFlag(t *testing.T) {
	edits, err := options("127.0.0.1:5353", member("member1"), member("member2", dnsServerService("10.96.0.53"))).planDNS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		if got := e.cm.Data["Corefile"]; !strings.Contains(got, "    forward . 127.0.0.1:5353\n}") {
			t.Errorf("%s: --dns-server is the one address of every member:\n%s", e.item.Cluster, got)
		}
	}
}

func TestPlanDNSWithoutTheService(t *testing.T) {
	for name, m := range map[string]*clusterset.Connection{
		"absent":   member("member2"),
		"headless": member("member2", dnsServerService(corev1.ClusterIPNone)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := options("", member("member1", dnsServerService("10.96.0.53")), m).planDNS(context.Background())
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			for _, want := range []string{`cluster "member2": service kubectl-mcs-system/kubectl-mcs-dns`, "kubectl mcs dns-server --print-manifests --context member2-ctx", "--dns-server"} {
				if !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line with %q", msg, want)
				}
			}
		})
	}
}

// Nothing is written when one member cannot be configured: the plan is made before any write.
func TestRunWritesNothingWhenAMemberHasNoDNSServer(t *testing.T) {
	m1, m2 := member("member1", dnsServerService("10.96.0.53")), member("member2")
	if err := options("", m1, m2).Run(context.Background()); err == nil {
		t.Fatal("want an error")
	}
	for _, m := range []*clusterset.Connection{m1, m2} {
		for _, a := range m.Client.(*fake.Clientset).Actions() {
			if a.GetVerb() != "get" {
				t.Errorf("%s: %s %s before every member was checked", m.ID, a.GetVerb(), a.GetResource().Resource)
			}
		}
	}
}
