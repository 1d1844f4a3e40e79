//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/internal/corednshost"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
)

// kubeadmCorefile is the Corefile kubeadm writes (test/testbed/kubeadm.Corefile, which make demo
// uses too): kwok members run no CoreDNS, so the tests give each member the ConfigMap a kubeadm
// cluster has, and init --dns edits that.
var kubeadmCorefile = func() string {
	b, err := os.ReadFile("../testbed/kubeadm.Corefile")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// setCorefile gives cluster c a kube-system/coredns ConfigMap holding corefile, removed at the end.
func setCorefile(t *testing.T, c, corefile string) {
	t.Helper()
	api := clients[c].kube.CoreV1().ConfigMaps("kube-system")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"}, Data: map[string]string{"Corefile": corefile}}
	if _, err := api.Update(context.Background(), cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = api.Create(context.Background(), cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	} else if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	t.Cleanup(func() { _ = api.Delete(context.Background(), "coredns", metav1.DeleteOptions{}) })
}

func corefile(t *testing.T, c string) string {
	t.Helper()
	cm, err := clients[c].kube.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return cm.Data["Corefile"]
}

// resolver runs CoreDNS on the host with the Corefile of c's ConfigMap, as ForHost adapts it,
// forwarding the clusterset zone to forward (the member's DNS server on the host).
func resolver(t *testing.T, c, forward string) string {
	t.Helper()
	bin := corednshost.Binary()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no CoreDNS at %s: run test/testbed/build.sh", bin)
	}
	port, err := corednshost.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := corednshost.ForHost(corefile(t, c), kubeconfig, c, port)
	if err == nil {
		conf, err = corednshost.WithForward(conf, forward)
	}
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	p, err := corednshost.Start(context.Background(), bin, t.TempDir(), conf, port, 90*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	t.Cleanup(p.Stop)
	t.Logf("%s: CoreDNS pid %d on %s", c, p.PID(), p.Addr)
	return p.Addr
}

// answer is what one query returned, flattened for comparison.
type answer struct {
	rcode  int
	names  []string // owner names of the answer section
	values []string // A/AAAA addresses, or SRV "port target"
}

func query(t *testing.T, addr, name string, qtype uint16) answer {
	t.Helper()
	var r *dns.Msg
	// A loaded machine may drop a UDP datagram: retry before calling it a failure.
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		var err error
		r, err = corednshost.Query(addr, name, qtype)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("query %s %s at %s: no answer", dns.TypeToString[qtype], name, addr)
	}
	a := answer{rcode: r.Rcode}
	for _, rr := range r.Answer {
		a.names = append(a.names, rr.Header().Name)
		switch v := rr.(type) {
		case *dns.A:
			a.values = append(a.values, v.A.String())
		case *dns.AAAA:
			a.values = append(a.values, v.AAAA.String())
		case *dns.SRV:
			a.values = append(a.values, fmt.Sprintf("%d %s", v.Port, v.Target))
		}
	}
	sort.Strings(a.values)
	return a
}

// waitAnswer polls until the answer has the rcode and values wanted (DNS follows the apiserver
// through the kubernetes plugin's watch: eventually, never at once).
func waitAnswer(t *testing.T, addr, name string, qtype uint16, rcode int, values []string) answer {
	t.Helper()
	var a answer
	start := time.Now()
	defer func() {
		t.Logf("%s %s at %s: %s %v after %s", dns.TypeToString[qtype], name, addr, dns.RcodeToString[a.rcode], a.values, time.Since(start).Round(time.Millisecond))
	}()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		a = query(t, addr, name, qtype)
		return a.rcode == rcode && slices.Equal(a.values, values), nil
	})
	if err != nil {
		t.Fatalf("%s %s at %s: got %s %v, want %s %v", dns.TypeToString[qtype], name, addr, dns.RcodeToString[a.rcode], a.values, dns.RcodeToString[rcode], values)
	}
	return a
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func namedPort(s *corev1.Service) { s.Spec.Ports[0].Name = "http" }
func headless(s *corev1.Service)  { s.Spec.ClusterIP = corev1.ClusterIPNone }

func TestDNSClusterset(t *testing.T) {
	for _, c := range members {
		setCorefile(t, c, kubeadmCorefile)
	}
	ns := namespace(t, "e2e-dns", members...)

	// Without a DNS server to forward to, init --dns refuses in one line, then the command that
	// runs one on a line of its own, and writes nothing.
	r := mcs("init", "--contexts", allMembers, "--dns")
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 1 || len(lines) != 2 ||
		!strings.Contains(lines[0], `cluster "member1": service kubectl-mcs-system/kubectl-mcs-dns not found`) || !strings.Contains(lines[0], "--dns-server=IP[:PORT]") ||
		lines[1] != "  kubectl mcs dns-server --print-manifests --context member1 | kubectl --context member1 apply -f -" {
		t.Errorf("init --dns without a DNS server: want one line naming member1 and the fix, then its command, exit 1; got %d:\n%s", r.code, r.stderr)
	}
	for _, c := range members {
		if corefile(t, c) != kubeadmCorefile {
			t.Errorf("%s: the Corefile was written although init --dns failed", c)
		}
	}

	// The DNS server as --print-manifests runs it in member1 (kwok runs its pods): init --dns
	// forwards to its Service's ClusterIP once it has a ready endpoint, and diagnose follows the
	// Service's endpoints.
	clusterIP := applyDNSServer(t, "member1")
	mustMCS(t, "init", "--contexts", "member1", "--dns", "--dns-wait=90s")
	if want := "    forward . " + clusterIP + ":53 { # service kubectl-mcs-system/kubectl-mcs-dns\n        force_tcp\n    }\n"; !strings.Contains(corefile(t, "member1"), want) {
		t.Errorf("member1: want %q in\n%s", want, corefile(t, "member1"))
	}
	waitDNSDiagnosis(t, ns, diagnose.OK, "kubectl-mcs-system/kubectl-mcs-dns ("+clusterIP+":53), 2 ready endpoint(s)")
	if out, err := runKubectl("member1", "-n", "kubectl-mcs-system", "scale", "deployment/kubectl-mcs-dns", "--replicas=0"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitDNSDiagnosis(t, ns, diagnose.Fail, "service kubectl-mcs-system/kubectl-mcs-dns has no ready endpoints")

	// On the test bed every member's DNS server runs on this host: one address for all.
	r = mustMCS(t, "init", "--contexts", allMembers, "--dns", "--dns-server=127.0.0.1:5353", "--dry-run=client", "-o", "yaml")
	if !strings.Contains(r.stdout, "clusterset.local:53 {") || !strings.Contains(r.stdout, "forward . 127.0.0.1:5353") || corefile(t, "member2") != kubeadmCorefile {
		t.Fatalf("--dry-run=client must show the new Corefile and write nothing:\n%s", r.stdout)
	}
	r = mustMCS(t, "init", "--contexts", allMembers, "--dns", "--dns-server=127.0.0.1:5353")
	for _, c := range members {
		did := "added"
		if c == "member1" {
			did = "replaced" // it forwarded to member1's DNS server Service (above)
		}
		if !strings.Contains(r.stdout, c+": configmap/coredns configured (clusterset DNS "+did+") -n kube-system") {
			t.Errorf("init --dns output lacks %s's block %s:\n%s", c, did, r.stdout)
		}
		if got := corefile(t, c); !strings.HasPrefix(got, kubeadmCorefile) || !strings.HasSuffix(got, "clusterset.local:53 {\n    errors\n    cache 5 {\n        disable denial\n    }\n    forward . 127.0.0.1:5353 {\n        force_tcp\n    }\n}\n# kubectl-mcs:end\n") {
			t.Errorf("%s: the Corefile must keep kubeadm's block and add ours:\n%s", c, got)
		}
	}
	if r = mustMCS(t, "init", "--contexts", allMembers, "--dns", "--dns-server=127.0.0.1:5353"); !strings.Contains(r.stdout, "member1: configmap/coredns unchanged") {
		t.Errorf("a second init --dns must change nothing:\n%s", r.stdout)
	}

	// serve: ClusterSetIP; web: Headless without hostnames; db: Headless with a db-0 in member1
	// and in member2; local: a plain Service of member2, never a clusterset name.
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve", namedPort)
	deployment(t, "member1", ns, "web", 2)
	service(t, "member1", ns, "web", namedPort, headless)
	db0 := map[string]string{}
	for _, c := range []string{"member1", "member2"} {
		db0[c] = hostPod(t, c, ns, "db", "db-0")
		service(t, c, ns, "db", namedPort, headless)
	}
	local := service(t, "member2", ns, "local")
	for _, svc := range []string{"serve", "web", "db"} {
		mustMCS(t, "expose", svc, "-n", ns, "--contexts", allMembers)
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)

	servers, addrs := map[string]*dnsServerProc{}, map[string]string{}
	for _, c := range members {
		servers[c] = startDNSServer(t, c)
		addrs[c] = resolver(t, c, servers[c].addr)
	}
	svcName := func(n string) string { return n + "." + ns + ".svc.clusterset.local." }
	serveName, webName, dbName := svcName("serve"), svcName("web"), svcName("db")
	webPods := podIPs(t, "member1", ns, "web")
	for _, c := range members {
		addr := addrs[c]
		ips := importedServiceIPs(t, c, ns, "serve")
		a := waitAnswer(t, addr, serveName, dns.TypeA, dns.RcodeSuccess, ips)
		if len(a.names) == 0 || a.names[0] != serveName {
			t.Errorf("%s: A answer names %v, want %s", c, a.names, serveName)
		}
		a = waitAnswer(t, addr, "_http._tcp."+serveName, dns.TypeSRV, dns.RcodeSuccess, []string{"80 " + serveName})
		if a.names[0] != "_http._tcp."+serveName {
			t.Errorf("%s: SRV owner %v", c, a.names)
		}
		// Headless without hostnames: the ready endpoints member1 exports; SRV on their port, each
		// target the dashed IP in member1, which resolves to that endpoint.
		waitAnswer(t, addr, webName, dns.TypeA, dns.RcodeSuccess, webPods)
		var targets []string
		for _, ip := range webPods {
			targets = append(targets, "8080 "+strings.ReplaceAll(ip, ".", "-")+".member1."+webName)
		}
		waitAnswer(t, addr, "_http._tcp."+webName, dns.TypeSRV, dns.RcodeSuccess, sorted(targets))
		for i, ip := range webPods {
			waitAnswer(t, addr, strings.Fields(targets[i])[1], dns.TypeA, dns.RcodeSuccess, []string{ip})
		}
		// Headless with hostnames: each cluster's db-0 by its own name, never the other's.
		waitAnswer(t, addr, dbName, dns.TypeA, dns.RcodeSuccess, sorted([]string{db0["member1"], db0["member2"]}))
		waitAnswer(t, addr, "_http._tcp."+dbName, dns.TypeSRV, dns.RcodeSuccess, []string{"8080 db-0.member1." + dbName, "8080 db-0.member2." + dbName})
		for _, src := range []string{"member1", "member2"} {
			waitAnswer(t, addr, "db-0."+src+"."+dbName, dns.TypeA, dns.RcodeSuccess, []string{db0[src]})
		}
		// Names that are not clusterset services, ports or endpoints: NXDOMAIN, never a local
		// Service's answer.
		for _, n := range []string{"local." + ns + ".svc.clusterset.local.", "a.b.c.d.clusterset.local.", "nope." + ns + ".svc.clusterset.local.",
			"db-0.member3." + dbName, "db-1.member1." + dbName, "_nope._tcp." + serveName, "db-0.member1." + serveName} {
			if got := query(t, addr, n, dns.TypeA); got.rcode != dns.RcodeNameError {
				t.Errorf("%s: %s = %s %v, want NXDOMAIN", c, n, dns.RcodeToString[got.rcode], got.values)
			}
		}
		// cluster.local answers as before.
		k, err := clients[c].kube.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitAnswer(t, addr, "kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{k.Spec.ClusterIP})
	}
	waitAnswer(t, addrs["member2"], "local."+ns+".svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{local.Spec.ClusterIP})
	own, err := clients["member1"].kube.CoreV1().Services(ns).Get(context.Background(), "serve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, addrs["member1"], "serve."+ns+".svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{own.Spec.ClusterIP})

	// An endpoint change reaches every resolver after the next sync.
	if out, err := runKubectl("member1", "-n", ns, "scale", "deployment/web", "--replicas=3"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitFor(t, "3 web pods", func() bool { return len(podIPs(t, "member1", ns, "web")) == 3 })
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	webPods = podIPs(t, "member1", ns, "web")
	for _, c := range members {
		waitAnswer(t, addrs[c], webName, dns.TypeA, dns.RcodeSuccess, webPods)
	}

	// Unexported: NXDOMAIN once sync removed the import.
	mustMCS(t, "unexpose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		waitAnswer(t, addrs[c], serveName, dns.TypeA, dns.RcodeNameError, nil)
		waitAnswer(t, addrs[c], webName, dns.TypeA, dns.RcodeSuccess, webPods)
	}

	// member3's DNS server stops: its clusterset names fail (CoreDNS's forward: SERVFAIL), its
	// cluster.local names do not.
	servers["member3"].stop()
	waitAnswer(t, addrs["member3"], webName, dns.TypeA, dns.RcodeServerFailure, nil)
	k, err := clients["member3"].kube.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, addrs["member3"], "kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{k.Spec.ClusterIP})

	// status names the DNS name of each service.
	if r := mustMCS(t, "status", "web", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "DNS name:       web."+ns+".svc.clusterset.local\n") {
		t.Errorf("status describe lacks the DNS name:\n%s", r.stdout)
	}
	if r := mustMCS(t, "status", "-n", ns, "--contexts", allMembers, "-o", "wide"); !strings.Contains(r.stdout, "web."+ns+".svc.clusterset.local") {
		t.Errorf("status -o wide lacks the DNS name:\n%s", r.stdout)
	}

	// --dns=false removes exactly our block.
	r = mustMCS(t, "init", "--contexts", allMembers, "--dns=false")
	for _, c := range members {
		if got := corefile(t, c); got != kubeadmCorefile {
			t.Errorf("%s: --dns=false must restore kubeadm's Corefile byte for byte:\n%s", c, got)
		}
	}
	if !strings.Contains(r.stdout, "member2: configmap/coredns configured (clusterset DNS removed)") {
		t.Errorf("init --dns=false output:\n%s", r.stdout)
	}
}

// importedServiceIPs are the ServiceImport's ips in c.
func importedServiceIPs(t *testing.T, c, ns, name string) []string {
	t.Helper()
	var ips []string
	waitFor(t, c+": ServiceImport "+name+" with ips", func() bool {
		si := get(t, c, siGVR("v1beta1"), ns, name)
		if si == nil {
			return false
		}
		raw, _ := si.Object["spec"].(map[string]any)["ips"].([]any)
		ips = ips[:0]
		for _, ip := range raw {
			if s, _ := ip.(string); net.ParseIP(s) != nil {
				ips = append(ips, s)
			}
		}
		return len(ips) > 0
	})
	return sorted(ips)
}

func TestDNSRefusesWhatItCannotEdit(t *testing.T) {
	setCorefile(t, "member1", kubeadmCorefile)
	setCorefile(t, "member2", kubeadmCorefile+"clusterset.local:53 {\n    whoami\n}\n")
	r := mcs("init", "--contexts", "member1,member2", "--dns", "--dns-server=127.0.0.1:5353")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || lines[0] != `error: cluster "member2": kube-system/coredns already serves "clusterset.local" (server block "clusterset.local:53"): pick another --dns-domain` {
		t.Errorf("want one line naming member2 and why, exit 1; got %d:\n%s", r.code, r.stderr)
	}
	if corefile(t, "member1") != kubeadmCorefile {
		t.Error("nothing may be written when one member cannot be edited")
	}
	setCorefile(t, "member2", "{ broken")
	if r = mcs("init", "--contexts", "member2", "--dns", "--dns-server=127.0.0.1:5353"); r.code != 1 || !strings.Contains(r.stderr, "cannot parse the Corefile") {
		t.Errorf("unparsable Corefile: %d %s", r.code, r.stderr)
	}
	_ = clients["member3"].kube.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "coredns", metav1.DeleteOptions{})
	if r = mcs("init", "--contexts", "member3", "--dns", "--dns-server=127.0.0.1:5353"); r.code != 1 || !strings.Contains(r.stderr, `cluster "member3": configmap kube-system/coredns not found`) {
		t.Errorf("missing ConfigMap: %d %s", r.code, r.stderr)
	}
	// CoreDNS's forward takes IP addresses only.
	if r = mcs("init", "--contexts", "member1", "--dns", "--dns-server=kubectl-mcs-dns.kubectl-mcs-system"); r.code != 1 || !strings.Contains(r.stderr, "--dns-server: \"kubectl-mcs-dns.kubectl-mcs-system\" is not an IP address") {
		t.Errorf("a host name for --dns-server: %d %s", r.code, r.stderr)
	}
}
