//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The DNS server keeps answering from its caches while its member's apiserver is away, and after
// a long outage (longer than client-go's reflector backoff, which reached a minute) answers a new
// import within seconds of the apiserver's return: its informers were held while the member was
// unreachable and relisted the moment it answered. Its import is written directly: what is
// tested is the DNS server's read of its member, not sync.
func TestDNSServerBackAfterALongOutage(t *testing.T) {
	ns := namespace(t, "e2e-dnsback", "member3")
	p := startDNSServer(t, "member3")
	answers := func(name, ip string) bool { return answersA(p.addr, name+"."+ns+".svc.clusterset.local.", ip) }
	if err := createImport(ns, "before", "10.96.250.1"); err != nil {
		t.Fatalf("member3: creating ServiceImport before: %v", err)
	}
	waitFor(t, "before answered", func() bool { return answers("before", "10.96.250.1") })

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	// Long enough for every reflector to be deep in its backoff, were it left to it.
	for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Second) {
		if !answers("before", "10.96.250.1") {
			t.Fatal("before not answered from the caches while member3's apiserver is away")
		}
	}
	testbed(t, "start", "member3")
	restarted = true

	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return createImport(ns, "after", "10.96.250.2") == nil, nil
	}); err != nil {
		t.Fatalf("member3: creating ServiceImport after the restart: %v", err)
	}
	start := time.Now()
	if wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return answers("after", "10.96.250.2"), nil
	}) != nil {
		t.Fatal("after: not answered within 10 s of its creation (informers left to the reflector's backoff?)")
	}
	t.Logf("after answered %.1f s after its creation", time.Since(start).Seconds())
	if !answers("before", "10.96.250.1") {
		t.Error("before no longer answered after the restart")
	}
}

// A DNS server told to stop goes on answering for --shutdown-delay, and goes on reading its
// member: CoreDNS's pooled TCP connections still reach a draining replica, and a service exported
// meanwhile must answer there, not NXDOMAIN.
func TestDNSServerDrainingReadsItsMember(t *testing.T) {
	ns := namespace(t, "e2e-dnsdrain", "member3")
	p := startDNSServer(t, "member3", "--shutdown-delay=15s")
	name := func(n string) string { return n + "." + ns + ".svc.clusterset.local." }
	if err := createImport(ns, "before", "10.96.251.1"); err != nil {
		t.Fatalf("member3: creating ServiceImport before: %v", err)
	}
	waitFor(t, "before answered", func() bool { return answersA(p.addr, name("before"), "10.96.251.1") })

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitFor(t, "the DNS server draining (its log)", func() bool {
		out, _ := os.ReadFile(p.log)
		return strings.Contains(string(out), "draining: answering, not ready")
	})
	if err := createImport(ns, "late", "10.96.251.2"); err != nil {
		t.Fatalf("member3: creating ServiceImport late: %v", err)
	}
	if wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return answersA(p.addr, name("late"), "10.96.251.2"), nil
	}) != nil {
		t.Fatal("late, imported while the DNS server drained, not answered within 10 s")
	}
	select {
	case <-p.exited:
		t.Fatalf("the DNS server exited %.1f s after SIGTERM, within its shutdown delay", time.Since(stopped).Seconds())
	default:
	}
	t.Logf("late answered %.1f s after SIGTERM, while draining", time.Since(stopped).Seconds())
}

// createImport writes a ClusterSetIP ServiceImport in member3 directly: what these tests check
// is the DNS server's read of its member, not sync.
func createImport(ns, name, ip string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{"type": "ClusterSetIP", "ips": []any{ip},
			"ports": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}}},
	}}
	_, err := clients["member3"].dyn.Resource(siGVR("v1beta1")).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	return err
}

// answersA says whether the DNS server at addr answers name's A query with ip alone, over TCP
// as CoreDNS forwards to it.
func answersA(addr, name, ip string) bool {
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(q, addr)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return false
	}
	a, ok := r.Answer[0].(*dns.A)
	return ok && a.A.String() == ip
}
