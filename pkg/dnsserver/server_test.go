package dnsserver

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/logcapture"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dnszone"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

func TestMain(m *testing.M) { logcapture.Main(m) }

func serviceImport(version, name string, t mcsv1beta1.ServiceImportType, ips ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": mcsapi.Group + "/" + version, "kind": "ServiceImport",
		"metadata": map[string]any{"namespace": "demo", "name": name},
		"spec":     map[string]any{"type": string(t), "ports": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}}},
	}}
	if len(ips) > 0 {
		l := make([]any, len(ips))
		for i, ip := range ips {
			l[i] = ip
		}
		_ = unstructured.SetNestedSlice(u.Object, l, "spec", "ips")
	}
	return u
}

func endpointSlice(name, service, cluster string, ours bool, hostname, ip string) *discoveryv1.EndpointSlice {
	labels := map[string]string{mcsv1beta1.LabelServiceName: service, mcsv1beta1.LabelSourceCluster: cluster}
	if ours {
		labels[names.EndpointSliceManagedByLabel] = names.EndpointSliceManagedByValue
	}
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: labels},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Hostname: &hostname}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Protocol: new(corev1.ProtocolTCP), Port: new(int32(8080))}}}
}

// fakeMember is a fake member serving version (none: no mcs-api CRDs), read over HTTP
// (apiServer); down makes it fail every request until it is set to false.
func fakeMember(t *testing.T, version string, down *atomic.Bool, objs ...runtime.Object) (*clusterset.Connection, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	var kube, dyn []runtime.Object
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			dyn = append(dyn, u)
		} else {
			kube = append(kube, o)
		}
	}
	kc := kubefake.NewClientset(kube...)
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports): "ServiceImportList", mcsapi.GVR(mcsapi.V1alpha1, mcsapi.ServiceImports): "ServiceImportList"}, dyn...)
	cfg := &rest.Config{Host: apiServer(t, kc, dc, version, down).URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &clusterset.Connection{Ref: clusterset.Ref{Context: "member2", ID: "member2"}, Config: cfg, Client: cs, Dynamic: d, Discovery: cs.Discovery()}, dc
}

func start(t *testing.T, m *clusterset.Connection) (*Server, <-chan error) {
	t.Helper()
	s, done, _ := startDraining(t, m, 0)
	return s, done
}

// startDraining starts a server that drains for drain once stopped (the returned func).
func startDraining(t *testing.T, m *clusterset.Connection, drain time.Duration) (*Server, <-chan error, context.CancelFunc) {
	t.Helper()
	s := New(m, Config{Listen: "127.0.0.1:0", HealthAddr: "127.0.0.1:0", Zone: dnszone.Config{Domain: "clusterset.local"}, Drain: drain})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return s, done, cancel
}

func query(t *testing.T, addr, net, name string, qtype uint16) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	r, _, err := (&dns.Client{Net: net, Timeout: 2 * time.Second}).Exchange(q, addr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", dns.TypeToString[qtype], name, net, err)
	}
	return r
}

// eventually polls until the answer to name is want ("RCODE value,value").
func eventually(t *testing.T, s *Server, name string, qtype uint16, want string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = summary(query(t, s.Addr(), "udp", name, qtype)); got == want {
			return
		}
	}
	t.Fatalf("%s %s: %q, want %q", dns.TypeToString[qtype], name, got, want)
}

func summary(r *dns.Msg) string {
	var v []string
	for _, rr := range r.Answer {
		v = append(v, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return dns.RcodeToString[r.Rcode] + " " + strings.Join(v, ",")
}

func readyz(t *testing.T, s *Server) int {
	t.Helper()
	resp, err := http.Get("http://" + s.HealthAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServesTheMembersObjects(t *testing.T) {
	m, dc := fakeMember(t, mcsapi.V1alpha1, nil,
		serviceImport(mcsapi.V1alpha1, "serve", mcsv1beta1.ClusterSetIP, "10.96.0.10"),
		serviceImport(mcsapi.V1alpha1, "web", mcsv1beta1.Headless),
		endpointSlice("web-member1", "web", "member1", true, "web-0", "10.11.0.1"),
		endpointSlice("web-member3", "web", "member3", true, "web-0", "10.13.0.1"),
		endpointSlice("web-other", "web", "member9", false, "web-0", "10.19.0.1")) // not sync's: not watched
	s, _ := start(t, m)
	eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.96.0.10")
	eventually(t, s, "web.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.11.0.1,10.13.0.1")
	eventually(t, s, "web-0.member3.web.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.13.0.1")
	eventually(t, s, "web-0.member9.web.demo.svc.clusterset.local.", dns.TypeA, "NXDOMAIN ")
	if r := query(t, s.Addr(), "tcp", "_http._tcp.web.demo.svc.clusterset.local.", dns.TypeSRV); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 2 || len(r.Extra) != 2 {
		t.Errorf("SRV over TCP: %v", r)
	}
	if r := query(t, s.Addr(), "udp", "kubernetes.default.svc.cluster.local.", dns.TypeA); r.Rcode != dns.RcodeRefused {
		t.Errorf("outside the zone: %s", dns.RcodeToString[r.Rcode])
	}
	if code := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz = %d after sync", code)
	}
	// Changes arrive through the watch.
	gvr := mcsapi.GVR(mcsapi.V1alpha1, mcsapi.ServiceImports)
	if _, err := dc.Resource(gvr).Namespace("demo").Create(context.Background(), serviceImport(mcsapi.V1alpha1, "late", mcsv1beta1.ClusterSetIP, "10.96.0.11"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "late.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.96.0.11")
	if err := dc.Resource(gvr).Namespace("demo").Delete(context.Background(), "serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "NXDOMAIN ")
}

// Until the member answers, the server answers SERVFAIL and is not ready.
func TestServfailUntilSynced(t *testing.T) {
	var fails atomic.Bool
	fails.Store(true)
	m, _ := fakeMember(t, mcsapi.V1beta1, &fails, serviceImport(mcsapi.V1beta1, "serve", mcsv1beta1.ClusterSetIP, "10.96.0.10"))
	s, _ := start(t, m)
	if r := query(t, s.Addr(), "udp", "serve.demo.svc.clusterset.local.", dns.TypeA); r.Rcode != dns.RcodeServerFailure {
		t.Errorf("before sync: %s", dns.RcodeToString[r.Rcode])
	}
	if code := readyz(t, s); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d before sync", code)
	}
	fails.Store(false)
	eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.96.0.10")
}

// A member without the CRDs is waited for (init may come after the DNS server), answering
// SERVFAIL and not ready meanwhile.
func TestNoCRDsIsWaitedFor(t *testing.T) {
	m, _ := fakeMember(t, "", nil)
	s, done := start(t, m)
	select {
	case err := <-done:
		t.Fatalf("Run ended on a member without the CRDs: %v", err)
	case <-time.After(2 * time.Second):
	}
	if code := readyz(t, s); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d while the CRDs are missing", code)
	}
	eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "SERVFAIL ")
}

func TestListenRefusesATakenPort(t *testing.T) {
	m, _ := fakeMember(t, mcsapi.V1beta1, nil)
	s, _ := start(t, m)
	other := New(m, Config{Listen: s.Addr()})
	if err := other.Listen(); err == nil || !strings.Contains(err.Error(), "listening on "+s.Addr()) {
		t.Errorf("err = %v", err)
	}
}

// Nothing is logged per query, nor when all goes well, at the default verbosity.
func TestQuietByDefault(t *testing.T) {
	logged := logcapture.Since()
	m, _ := fakeMember(t, mcsapi.V1beta1, nil, serviceImport(mcsapi.V1beta1, "serve", mcsv1beta1.ClusterSetIP, "10.96.0.10"))
	s, _ := start(t, m)
	for range 3 {
		eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.96.0.10")
	}
	if got := logged(); got != "" {
		t.Errorf("at the default verbosity, the DNS server logs:\n%s", got)
	}
}

// Once told to stop, the server is not ready but answers for its drain time, so that the
// Service's other replica takes the new queries first; then it stops answering. While it drains it
// still reads the member: CoreDNS's pooled TCP connections go on reaching it, and a service
// exported meanwhile must not be NXDOMAIN there.
func TestDrainsBeforeStopping(t *testing.T) {
	m, dc := fakeMember(t, mcsapi.V1alpha1, nil, serviceImport(mcsapi.V1alpha1, "serve", mcsv1beta1.ClusterSetIP, "10.96.0.10"))
	drain := 3 * time.Second
	s, done, stop := startDraining(t, m, drain)
	eventually(t, s, "serve.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.96.0.10")
	stop()
	stopped := time.Now()
	// Run's goroutine sees the stop, not stop() itself: on a loaded machine that takes a moment.
	for code := readyz(t, s); code != http.StatusServiceUnavailable; code = readyz(t, s) {
		if time.Since(stopped) > drain/3 {
			t.Fatalf("/readyz = %d %s after the stop, want 503", code, time.Since(stopped))
		}
		time.Sleep(10 * time.Millisecond)
	}
	late := serviceImport(mcsapi.V1alpha1, "late", mcsv1beta1.ClusterSetIP, "10.96.0.11")
	if _, err := dc.Resource(mcsapi.GVR(mcsapi.V1alpha1, mcsapi.ServiceImports)).Namespace("demo").Create(context.Background(), late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lateAnswer := ""
	for deadline := stopped.Add(drain * 2 / 3); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got := summary(query(t, s.Addr(), "udp", "serve.demo.svc.clusterset.local.", dns.TypeA)); got != "NOERROR 10.96.0.10" {
			t.Fatalf("while draining: %q, want the answer", got)
		}
		lateAnswer = summary(query(t, s.Addr(), "tcp", "late.demo.svc.clusterset.local.", dns.TypeA))
		if code := readyz(t, s); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz while draining = %d, want 503", code)
		}
	}
	if lateAnswer != "NOERROR 10.96.0.11" {
		t.Errorf("a service imported while draining: %q, want NOERROR 10.96.0.11", lateAnswer)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(stopped); d < drain {
		t.Fatalf("stopped %s after the interrupt, before the drain time %s", d, drain)
	}
	q := new(dns.Msg)
	q.SetQuestion("serve.demo.svc.clusterset.local.", dns.TypeA)
	if _, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(q, s.Addr()); err == nil {
		t.Fatal("still answering after the drain")
	}
}
