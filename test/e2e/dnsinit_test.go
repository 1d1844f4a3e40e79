//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// written is what init may write in cluster c, by object, with its resourceVersion: the CoreDNS
// ConfigMap and the CRDs init installs (already installed by the suite's setup).
func written(t *testing.T, c string) map[string]string {
	t.Helper()
	out := map[string]string{}
	cm, err := clients[c].kube.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	out["configmap/coredns"] = cm.ResourceVersion
	crds, err := clients[c].dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		List(context.Background(), metav1.ListOptions{LabelSelector: names.ManagedByLabel + "=" + names.ManagedByValue})
	if err != nil || len(crds.Items) == 0 {
		t.Fatalf("%s: the suite's CRDs: %v (%d)", c, err, len(crds.Items))
	}
	for _, crd := range crds.Items {
		out["crd/"+crd.GetName()] = crd.GetResourceVersion()
	}
	return out
}

// refused runs init with args, which must fail with exactly the line "error: "+want on stderr
// and change nothing in c.
func refused(t *testing.T, c, want string, args ...string) {
	t.Helper()
	before := written(t, c)
	r := mcs(append([]string{"init", "--contexts", c}, args...)...)
	if got := strings.TrimSpace(r.stderr); r.code != 1 || got != "error: "+want {
		t.Errorf("init %s: exit %d\n got: %s\nwant: %s", strings.Join(args, " "), r.code, got, want)
	}
	for obj, rv := range written(t, c) {
		if before[obj] != rv {
			t.Errorf("init %s failed but wrote %s in %s (resourceVersion %s, was %s)", strings.Join(args, " "), obj, c, rv, before[obj])
		}
	}
}

// init --dns forwards CoreDNS to the DNS server's Service only once it has a ready endpoint:
// before, it refuses (or, with --dns-wait, waits) and writes nothing.
func TestDNSInitWaitsForAReadyDNSServer(t *testing.T) {
	setCorefile(t, "member1", kubeadmCorefile)
	clusterIP := applyDNSServer(t, "member1")
	// Its pods ready first, then none: scaled down before, they could turn ready after the wait.
	waitFor(t, "member1: the DNS server's 2 ready endpoints", func() bool { return readyDNSServerEndpoints(t, "member1") == 2 })
	scaleDNSServer(t, "member1", 0)
	waitFor(t, "member1: no ready endpoint of the DNS server", func() bool { return readyDNSServerEndpoints(t, "member1") == 0 })

	line := func(after, hint string) string {
		return fmt.Sprintf(`cluster "member1": service kubectl-mcs-system/kubectl-mcs-dns has no ready endpoint%s: CoreDNS would forward the clusterset zone to it and every clusterset lookup would fail (SERVFAIL); `+
			"%s:\n  kubectl --context member1 -n kubectl-mcs-system get pods -l app.kubernetes.io/name=kubectl-mcs-dns", after, hint)
	}
	refused(t, "member1", line("", "wait for one with --dns-wait=DURATION, or see why its pods are not ready"), "--dns")
	refused(t, "member1", line(" after 2s", "see why its pods are not ready"), "--dns", "--dns-wait=2s")

	// init --dns-wait waits, writing nothing, until kwok runs the pods and marks them ready; then
	// it forwards to the Service.
	before := written(t, "member1")
	done := make(chan result)
	start := time.Now()
	go func() { done <- mcs("init", "--contexts", "member1", "--dns", "--dns-wait=90s") }()
	time.Sleep(3 * time.Second)
	if got := written(t, "member1"); !maps.Equal(got, before) {
		t.Errorf("member1: init --dns-wait wrote while the Service had no ready endpoint: %v, was %v", got, before)
	}
	scaleDNSServer(t, "member1", 2)
	r := <-done
	t.Logf("init --dns --dns-wait=90s returned after %s (the pods were scaled up after 3s)", time.Since(start).Round(time.Millisecond))
	if r.code != 0 {
		t.Fatalf("init --dns --dns-wait=90s: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "member1: configmap/coredns configured (clusterset DNS added) -n kube-system") {
		t.Errorf("init --dns --dns-wait output:\n%s", r.stdout)
	}
	if want := "    forward . " + clusterIP + ":53 { # service kubectl-mcs-system/kubectl-mcs-dns\n        force_tcp\n    }\n"; !strings.Contains(corefile(t, "member1"), want) {
		t.Errorf("member1: want %q in\n%s", want, corefile(t, "member1"))
	}
	if n := readyDNSServerEndpoints(t, "member1"); n == 0 {
		t.Error("init succeeded while the Service had no ready endpoint")
	}
}

// A --dns-domain that kubeadm's Corefile already serves, or that holds or lies under a zone it
// serves, is refused in one line naming the block and the plugin, before the DNS server is even
// looked for (member1 has none here), and nothing is written.
func TestDNSInitRefusesADomainTheCorefileServes(t *testing.T) {
	setCorefile(t, "member1", kubeadmCorefile)
	for domain, served := range map[string]string{
		"cluster.local":     `"cluster.local"`,
		"svc.cluster.local": `"svc.cluster.local" as part of "cluster.local"`,
		"local":             `"cluster.local", inside "local"`,
		"10.in-addr.arpa":   `"10.in-addr.arpa" as part of "in-addr.arpa"`,
	} {
		refused(t, "member1", `cluster "member1": kube-system/coredns already serves `+served+` (server block ".:53", plugin kubernetes): pick another --dns-domain`,
			"--dns", "--dns-domain="+domain)
	}
	if corefile(t, "member1") != kubeadmCorefile {
		t.Error("member1: the Corefile changed")
	}
}

func scaleDNSServer(t *testing.T, c string, replicas int) {
	t.Helper()
	if out, err := runKubectl(c, "-n", names.SystemNamespace, "scale", "deployment/"+names.DNSServerName, "--replicas="+itoa(replicas)); err != nil {
		t.Fatalf("%s: %v: %s", c, err, out)
	}
}

// readyDNSServerEndpoints counts the ready endpoints of the DNS server's Service in c.
func readyDNSServerEndpoints(t *testing.T, c string) int {
	t.Helper()
	l, err := clients[c].kube.DiscoveryV1().EndpointSlices(names.SystemNamespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + names.DNSServerName})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	n := 0
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}
