package initcmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
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
	return memberWith(id, kubeadm, objs...)
}

// memberWith is a member whose kube-system/coredns holds corefile.
func memberWith(id, corefile string, objs ...runtime.Object) *clusterset.Connection {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"}, Data: map[string]string{"Corefile": corefile}}
	return &clusterset.Connection{Ref: clusterset.Ref{Context: id + "-ctx", ID: id}, Client: fake.NewClientset(append(objs, cm)...)}
}

func dnsServerService(ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: names.SystemNamespace, Name: names.DNSServerName},
		Spec: corev1.ServiceSpec{ClusterIP: ip}}
}

// dnsServerSlice is an EndpointSlice of the DNS server's Service, one endpoint per readiness
// given (nil: conditions.ready unset).
func dnsServerSlice(name string, ready ...*bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: names.SystemNamespace, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: names.DNSServerName}}, AddressType: discoveryv1.AddressTypeIPv4}
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.11.0.%d", i+1)}, Conditions: discoveryv1.EndpointConditions{Ready: r}})
	}
	return s
}

// dnsServer is the Service at ip with one ready endpoint.
func dnsServer(ip string) []runtime.Object {
	return []runtime.Object{dnsServerService(ip), dnsServerSlice("kubectl-mcs-dns-x", ptr.To(true))}
}

func options(server string, members ...*clusterset.Connection) *Options {
	return &Options{members: members, DNS: DNSFlags{Enable: true, set: true, Domain: corefile.DefaultDomain, Server: server,
		namespace: "kube-system", name: "coredns"}}
}

func TestPlanDNSForwardsToTheDNSServerService(t *testing.T) {
	edits, err := options("", member("member1", dnsServer("10.96.0.53")...), member("member2", dnsServer("fd00::53")...)).planDNS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"forward . 10.96.0.53:53 { # service kubectl-mcs-system/kubectl-mcs-dns\n        force_tcp\n    }\n", "forward . [fd00::53]:53 { # service kubectl-mcs-system/kubectl-mcs-dns\n        force_tcp\n    }\n"} {
		if got := edits[i].cm.Data["Corefile"]; !edits[i].changed || !strings.Contains(got, want) {
			t.Errorf("%s: want %q in\n%s", edits[i].item.Cluster, want, got)
		}
	}
}

func TestPlanDNSWithDNSServerFlag(t *testing.T) {
	edits, err := options("127.0.0.1:5353", member("member1"), member("member2", dnsServer("10.96.0.53")...)).planDNS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		if got := e.cm.Data["Corefile"]; !strings.Contains(got, "    forward . 127.0.0.1:5353 {\n        force_tcp\n    }\n}") {
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
			_, err := options("", member("member1", dnsServer("10.96.0.53")...), m).planDNS(context.Background())
			if err == nil {
				t.Fatal("want an error")
			}
			// One line naming the member and the fix, then the command on a line of its own.
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], `cluster "member2": service kubectl-mcs-system/kubectl-mcs-dns`) || !strings.Contains(lines[0], "--dns-server") ||
				lines[1] != "  kubectl mcs dns-server --print-manifests --context member2-ctx | kubectl --context member2-ctx apply -f -" {
				t.Errorf("error %q: want one line naming member2 and --dns-server, then the command", err)
			}
		})
	}
}

// Nothing is written when one member cannot be configured: the plan is made before any write.
func TestRunWritesNothingWhenAMemberHasNoDNSServer(t *testing.T) {
	m1, m2 := member("member1", dnsServer("10.96.0.53")...), member("member2")
	if err := options("", m1, m2).Run(context.Background()); err == nil {
		t.Fatal("want an error")
	}
	readOnly(t, m1, m2)
}

// readOnly fails the test when a member's client did anything but read.
func readOnly(t *testing.T, members ...*clusterset.Connection) {
	t.Helper()
	for _, m := range members {
		for _, a := range m.Client.(*fake.Clientset).Actions() {
			if a.GetVerb() != "get" && a.GetVerb() != "list" {
				t.Errorf("%s: %s %s before every member was checked", m.ID, a.GetVerb(), a.GetResource().Resource)
			}
		}
	}
}

// A Service without a ready endpoint is refused as a missing one is, in one line naming the
// cluster and the Service, and nothing is written anywhere (member1 is fine and listed first).
func TestRunRefusesADNSServerWithoutReadyEndpoints(t *testing.T) {
	for name, objs := range map[string][]runtime.Object{
		"no slice":  {dnsServerService("10.96.0.53")},
		"not ready": {dnsServerService("10.96.0.53"), dnsServerSlice("a", ptr.To(false), ptr.To(false))},
		"another service": {dnsServerService("10.96.0.53"), func() runtime.Object {
			s := dnsServerSlice("b", ptr.To(true))
			s.Labels[discoveryv1.LabelServiceName] = "other"
			return s
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			m1, m2 := member("member1", dnsServer("10.96.0.53")...), member("member2", objs...)
			err := options("", m1, m2).Run(context.Background())
			want := `cluster "member2": service kubectl-mcs-system/kubectl-mcs-dns has no ready endpoint: CoreDNS would forward the clusterset zone to it and every clusterset lookup would fail (SERVFAIL); ` +
				"wait for one with --dns-wait=DURATION, or see why its pods are not ready:\n  kubectl --context member2-ctx -n kubectl-mcs-system get pods -l app.kubernetes.io/name=kubectl-mcs-dns"
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			readOnly(t, m1, m2)
		})
	}
	// conditions.ready unset is ready, as the API says; one ready endpoint among others is enough.
	m := member("member1", dnsServerService("10.96.0.53"), dnsServerSlice("a", ptr.To(false)), dnsServerSlice("b", nil))
	if _, err := options("", m).planDNS(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// --dns-wait waits for a ready endpoint (and for the Service itself), in every member, until one
// deadline; when it passes, the refusal is the same line, saying how long it waited.
func TestPlanDNSWaitsForAReadyEndpoint(t *testing.T) {
	m1, m2 := member("member1"), member("member2", dnsServerService("10.96.0.54"), dnsServerSlice("a", ptr.To(false)))
	o := options("", m1, m2)
	o.DNS.Wait = 20 * time.Second
	go func() {
		time.Sleep(1500 * time.Millisecond)
		for _, obj := range dnsServer("10.96.0.53") {
			_ = m1.Client.(*fake.Clientset).Tracker().Add(obj)
		}
		_, _ = m2.Client.DiscoveryV1().EndpointSlices(names.SystemNamespace).Update(context.Background(), dnsServerSlice("a", ptr.To(true)), metav1.UpdateOptions{})
	}()
	start := time.Now()
	edits, err := o.planDNS(context.Background())
	if err != nil || len(edits) != 2 || !strings.Contains(edits[1].cm.Data["Corefile"], "forward . 10.96.0.54:53") {
		t.Fatalf("err %v, edits %d", err, len(edits))
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("planDNS returned after %s: want once the endpoints were ready (1.5s)", d)
	}

	m3 := member("member3", dnsServerService("10.96.0.55"))
	o = options("", m3)
	o.DNS.Wait = 1200 * time.Millisecond
	start = time.Now()
	_, err = o.planDNS(context.Background())
	want := `cluster "member3": service kubectl-mcs-system/kubectl-mcs-dns has no ready endpoint after 1.2s: CoreDNS would forward the clusterset zone to it and every clusterset lookup would fail (SERVFAIL); ` +
		"see why its pods are not ready:\n  kubectl --context member3-ctx -n kubectl-mcs-system get pods -l app.kubernetes.io/name=kubectl-mcs-dns"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if d := time.Since(start); d < 1200*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %s, want 1.2s", d)
	}
}

// A --dns-domain the Corefile already serves is refused in one line naming the cluster, the
// ConfigMap, the server block and the plugin, before anything is written, and before waiting for
// a DNS server (member1 has none).
func TestRunRefusesADomainTheCorefileServes(t *testing.T) {
	// CoreDNS reads "cluster.local" as cluster.local: quoted, the zone is served all the same.
	quoted := strings.Replace(kubeadm, "kubernetes cluster.local in-addr.arpa", `kubernetes "cluster.local" in-addr.arpa`, 1)
	for name, text := range map[string]string{"kubeadm": kubeadm, "quoted": quoted} {
		t.Run(name, func(t *testing.T) {
			m1, m2 := memberWith("member1", text), memberWith("member2", text, dnsServer("10.96.0.53")...)
			o := options("", m1, m2)
			o.DNS.Domain, o.DNS.Wait = "cluster.local", time.Minute
			start := time.Now()
			err := o.Run(context.Background())
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %s: the Corefiles are checked before waiting", d)
			}
			want := `cluster "member1": kube-system/coredns already serves "cluster.local" (server block ".:53", plugin kubernetes): pick another --dns-domain`
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			readOnly(t, m1, m2)
		})
	}
}

func TestDNSWaitFlag(t *testing.T) {
	for args, want := range map[string]string{
		"--dns-wait=1m": "--dns-wait goes with --dns",
		"--dns --dns-wait=1m --dns-server=127.0.0.1:5353": "--dns-wait waits for service kubectl-mcs-system/kubectl-mcs-dns: it goes with --dns, without --dns-server",
		"--dns=false --dns-wait=1m":                       "it goes with --dns, without --dns-server",
		"--dns --dns-wait=-1s":                            "--dns-wait -1s: want a duration of 0 or more",
		"--dns --dns-wait=2m":                             "",
	} {
		var f DNSFlags
		cmd := &cobra.Command{}
		f.AddFlags(cmd)
		if err := cmd.ParseFlags(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		f.Complete(cmd)
		err := f.Validate(cmd)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
}
