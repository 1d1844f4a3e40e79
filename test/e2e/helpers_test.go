//go:build e2e

package e2e

// The helpers every e2e test may use: running the binary, kubectl and the test bed; the objects of
// the seed scenario; reading what a member holds; waiting. What one concern alone uses stays in
// its own files (the campaign's in campaign_*.go, the DNS tests' in dns_test.go and
// dnsserver_test.go); TestMain and the setup of the suite's clusters are in main_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
)

type result struct {
	stdout, stderr string
	code           int
}

// mcs runs the plugin binary against the test bed.
func mcs(args ...string) result {
	return runBinary(nil, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// runBinary runs the plugin binary with extra environment variables.
func runBinary(env []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(append(os.Environ(), "KUBECTL_MCS_CONTEXTS="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return result{out.String(), errb.String(), code}
}

func mustMCS(t *testing.T, args ...string) result {
	t.Helper()
	r := mcs(args...)
	if r.code != 0 {
		t.Fatalf("kubectl mcs %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func runKubectl(ctx string, args ...string) ([]byte, error) {
	return exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--context", ctx}, args...)...).CombinedOutput()
}

func testbed(t *testing.T, verb, name string) {
	t.Helper()
	cmd := exec.Command("bash", "../testbed/testbed.sh", verb, name)
	// The test bed whose kubeconfig the suite uses, whatever TESTBED_DIR says.
	cmd.Env = append(os.Environ(), "TESTBED_DIR="+filepath.Dir(kubeconfig))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testbed %s %s: %v\n%s", verb, name, err, out)
	}
	if verb == "start" {
		// Later tests schedule pods there; the outage left the node tainted unreachable.
		t.Cleanup(func() { nodeSchedulable(t, name) })
	}
}

// watcher is a `sync --watch` process with its metrics and health endpoints on loopback.
type watcher struct {
	cmd             *exec.Cmd
	out             *lockedBuffer
	metrics, health string
	exited          chan struct{}
	exitErr         error
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startWatch runs `sync --watch` in the background until the test ends (or kill/terminate).
func startWatch(t *testing.T, ns string, extra ...string) *watcher {
	t.Helper()
	metrics, health := freePort(t), freePort(t)
	args := append([]string{"--kubeconfig", kubeconfig, "sync", "--watch", "-n", ns, "--contexts", allMembers,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", health}, extra...)
	w := startBinary(t, nil, args...)
	w.metrics, w.health = metrics, health
	return w
}

// startBinary starts the plugin binary, with extra environment variables, until the test ends.
func startBinary(t *testing.T, env []string, args ...string) *watcher {
	t.Helper()
	w := &watcher{out: &lockedBuffer{}, exited: make(chan struct{})}
	w.cmd = exec.Command(binary, args...)
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.exitErr = w.cmd.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("sync --watch output:\n%s", w.out.String())
		}
	})
	return w
}

func (w *watcher) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

// terminate sends SIGTERM and returns the exit error once the process has ended.
func (w *watcher) terminate(t *testing.T) error {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
		return w.exitErr
	case <-time.After(20 * time.Second):
		t.Fatal("sync --watch did not exit within 20s of SIGTERM")
		return nil
	}
}

// probe is the HTTP status of a health endpoint (0 when nothing answers).
func (w *watcher) probe(path string) int {
	resp, err := http.Get("http://" + w.health + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// metric sums every sample of a Prometheus metric family (e.g. all label sets of a counter).
func (w *watcher) metric(t *testing.T, name string) float64 {
	t.Helper()
	v, found, err := promtext.Scrape("http://"+w.metrics+"/metrics", name)
	if err != nil || (!found && !strings.HasSuffix(name, "_total")) {
		t.Fatalf("metrics: %s: found %v, %v", name, found, err)
	}
	return v
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// leaseHolder is the holder of sync's Lease in ns of cluster c ("" when there is none).
func leaseHolder(t *testing.T, c, ns string) string {
	t.Helper()
	l, err := clients[c].kube.CoordinationV1().Leases(ns).Get(context.Background(), "kubectl-mcs-sync", metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && l.Spec.HolderIdentity == nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("%s: get Lease %s/kubectl-mcs-sync: %v", c, ns, err)
	}
	return *l.Spec.HolderIdentity
}

var allMembers = strings.Join(members, ",")

var (
	seGVR = func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: v, Resource: "serviceexports"}
	}
	siGVR = func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: v, Resource: "serviceimports"}
	}
	mcsGVR = schema.GroupVersionResource{Group: "networking.karmada.io", Version: "v1alpha1", Resource: "multiclusterservices"}
	ppGVR  = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
)

// namespace creates a fresh, uniquely named namespace in the given clusters and removes it when
// the test ends.
func namespace(t *testing.T, prefix string, in ...string) string {
	t.Helper()
	name := prefix + "-" + utilrand.String(5)
	for _, c := range in {
		_, err := clients[c].kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: creating namespace %s: %v", c, name, err)
		}
	}
	t.Cleanup(func() {
		for _, c := range in {
			_ = clients[c].kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	// kube-controller-manager fills a new namespace (its default ServiceAccount, kube-root-ca.crt)
	// a moment later, later still on a loaded machine: a test that holds the members unchanged
	// (diagnoseRun) must not take that for its command's write. A Karmada control plane runs
	// neither controller.
	for _, c := range in {
		if c == karmadaCtx {
			continue
		}
		waitFor(t, c+": namespace "+name+" filled by the controllers", func() bool {
			_, saErr := clients[c].kube.CoreV1().ServiceAccounts(name).Get(context.Background(), "default", metav1.GetOptions{})
			_, cmErr := clients[c].kube.CoreV1().ConfigMaps(name).Get(context.Background(), "kube-root-ca.crt", metav1.GetOptions{})
			return saErr == nil && cmErr == nil
		})
	}
	return name
}

// service creates the seed guide's serve Service (port 80 -> 8080) in ns of the given cluster.
func service(t *testing.T, c, ns, name string, mutate ...func(*corev1.Service)) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	out, err := clients[c].kube.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s: creating service %s/%s: %v", c, ns, name, err)
	}
	return out
}

// deployment runs the seed guide's serve Deployment (kwok gives its pods Running + IPs).
func deployment(t *testing.T, c, ns, name string, replicas int) {
	t.Helper()
	if out, err := runKubectl(c, "-n", ns, "create", "deployment", name, "--image=jeremyot/serve:0a40de8", "--replicas", itoa(replicas)); err != nil {
		t.Fatalf("%s: %v: %s", c, err, out)
	}
	waitFor(t, "pods of "+c+"/"+name+" ready", func() bool { return len(podIPs(t, c, ns, name)) == replicas })
}

func itoa(i int) string { return strconv.Itoa(i) }

func userExport(t *testing.T, c, ns, name string) {
	t.Helper()
	se := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
	if _, err := clients[c].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Create(context.Background(), se, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: %v", c, err)
	}
}

// seedService is the guide's state after `expose` and `sync`: serve runs in member1 with two
// pods and is imported in all three clusters.
func seedService(t *testing.T, prefix string) string {
	t.Helper()
	ns := namespace(t, prefix, members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	waitFor(t, "member1's endpoints", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 2 })
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	return ns
}

const managedBy = "app.kubernetes.io/managed-by"

func gvrOf(t *testing.T, u *unstructured.Unstructured) schema.GroupVersionResource {
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{"MultiClusterService": "multiclusterservices", "PropagationPolicy": "propagationpolicies", "ServiceExport": "serviceexports", "ServiceImport": "serviceimports"}[u.GetKind()]
	if res == "" {
		t.Fatalf("unexpected kind %s", u.GetKind())
	}
	return gv.WithResource(res)
}

// get returns the object or nil when it does not exist.
func get(t *testing.T, c string, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := clients[c].dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: get %s %s/%s: %v", c, gvr.Resource, ns, name, err)
	}
	return u
}

// count lists how many objects of a kind a namespace holds in each cluster.
func count(t *testing.T, gvr schema.GroupVersionResource, ns string, in ...string) int {
	t.Helper()
	n := 0
	for _, c := range in {
		l, err := clients[c].dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s: list %s in %s: %v", c, gvr.Resource, ns, err)
		}
		n += len(l.Items)
	}
	return n
}

func podIPs(t *testing.T, c, ns, app string) []string {
	t.Helper()
	pods, err := clients[c].kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			ips = append(ips, p.Status.PodIP)
		}
	}
	sort.Strings(ips)
	return ips
}

// sourceIPs is the addresses of a Service's own slices: the ready ones, or all with all=true.
func sourceIPs(t *testing.T, c, ns, svc string, all ...bool) []string {
	l, _ := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
	var ips []string
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			if len(all) > 0 || e.Conditions.Ready == nil || *e.Conditions.Ready {
				ips = append(ips, e.Addresses...)
			}
		}
	}
	sort.Strings(ips) // as importedIPs: the tests compare them
	return ips
}

// importedIPs is every endpoint address of the MCS slices in cluster c for service name.
func importedIPs(t *testing.T, c, ns, name, source string) []string {
	t.Helper()
	sel := "multicluster.kubernetes.io/service-name=" + name
	if source != "" {
		sel += ",multicluster.kubernetes.io/source-cluster=" + source
	}
	l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			ips = append(ips, e.Addresses...)
		}
	}
	sort.Strings(ips)
	return ips
}

func conditions(t *testing.T, c, ns, name string) map[string]string {
	t.Helper()
	se := get(t, c, seGVR("v1beta1"), ns, name)
	out := map[string]string{}
	if se == nil {
		return out
	}
	conds, _, _ := unstructured.NestedSlice(se.Object, "status", "conditions")
	for _, x := range conds {
		m := x.(map[string]any)
		out[m["type"].(string)] = m["status"].(string) + "/" + m["reason"].(string)
	}
	return out
}

func derivedService(t *testing.T, c, ns, name string) *corev1.Service {
	t.Helper()
	s, err := clients[c].kube.CoreV1().Services(ns).Get(context.Background(), "derived-"+name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func managedSliceUIDs(t *testing.T, c, ns string) []string {
	t.Helper()
	l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "endpointslice.kubernetes.io/managed-by=kubectl-mcs"})
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, s := range l.Items {
		uids = append(uids, string(s.UID))
	}
	sort.Strings(uids)
	return uids
}

func slicePortsBySource(t *testing.T, c, ns, name string) map[string][]string {
	t.Helper()
	return slicesBySource(t, c, ns, name, func(s discoveryv1.EndpointSlice) []string {
		var names []string
		for _, p := range s.Ports {
			n := ""
			if p.Name != nil {
				n = *p.Name
			}
			names = append(names, n)
		}
		return names
	})
}

// slicesBySource is, in cluster c, what each of the copies of ns/name gives, by source cluster,
// sorted.
func slicesBySource(t *testing.T, c, ns, name string, each func(discoveryv1.EndpointSlice) []string) map[string][]string {
	t.Helper()
	l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "multicluster.kubernetes.io/service-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range l.Items {
		src := s.Labels["multicluster.kubernetes.io/source-cluster"]
		out[src] = append(out[src], each(s)...)
		sort.Strings(out[src])
	}
	return out
}

// row finds the table line of service ns/name and returns its whitespace-separated fields.
func row(t *testing.T, table, ns, name string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if i := slices.Index(f, ns); i >= 0 && i+1 < len(f) && f[i+1] == name {
			return f
		}
	}
	t.Fatalf("no row for %s/%s in\n%s", ns, name, table)
	return nil
}

// cell returns the field under a header column, counting fields from the row's end.
func cell(t *testing.T, table string, fields []string, column string) string {
	t.Helper()
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	i := slices.Index(header, column)
	if i < 0 {
		t.Fatalf("no column %s in %v", column, header)
	}
	return fields[len(fields)-(len(header)-i)]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// nodeSchedulable waits (up to 3 minutes) until the node controller has lifted the taints an
// outage left on the cluster's node, so that later tests can schedule pods there.
func nodeSchedulable(t *testing.T, c string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		n, err := clients[c].kube.CoreV1().Nodes().Get(context.Background(), c+"-node", metav1.GetOptions{})
		if err == nil && len(n.Spec.Taints) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s: node still tainted 3 minutes after the outage", c)
}

// kubeconfigWith writes a copy of the test bed's kubeconfig with extra clusters (context name ->
// server URL; each gets member1's credentials) and returns its path.
func kubeconfigWith(t *testing.T, servers map[string]string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name, server := range servers {
		c := cfg.Clusters[cfg.Contexts["member1"].Cluster].DeepCopy()
		c.Server = server
		if strings.HasPrefix(server, "http://") {
			c.CertificateAuthority, c.CertificateAuthorityData = "", nil
		}
		cfg.Clusters[name] = c
		ctx := cfg.Contexts["member1"].DeepCopy()
		ctx.Cluster = name
		cfg.Contexts[name] = ctx
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedPort is a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return strings.Replace(u, "http://", "https://", 1)
}

// noCRDsProxy serves member1's API without the multicluster.x-k8s.io group: a real apiserver
// without the mcs-api CRDs, next to the others, changing nothing in the test bed.
func noCRDsProxy(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "member1"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	upstream, _ := url.Parse(cfg.Host)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.Transport = tr
	hidden := "/apis/multicluster.x-k8s.io"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, hidden):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		case r.URL.Path == "/apis" || r.URL.Path == "/apis/":
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, cfg.Host+"/apis", nil)
			req.Header.Set("Accept", "application/json") // the plain APIGroupList, not aggregated discovery
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			var groups metav1.APIGroupList
			_ = json.NewDecoder(resp.Body).Decode(&groups)
			groups.Groups = slices.DeleteFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "multicluster.x-k8s.io" })
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(groups)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}
