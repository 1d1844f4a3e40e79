//go:build e2e

package e2e

// The seed scenarios through a real Karmada control plane (test/testbed/karmada.sh: the
// karmada-apiserver, karmada-webhook, karmada-aggregated-apiserver, karmada-controller-manager
// with MultiClusterService=true and karmada-scheduler, member1-3 joined in Push mode). Run by
// make test-karmada, which sets E2E_KARMADA_REAL_KUBECONFIG; without it every test here skips
// with one line.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

func needRealKarmada(t *testing.T) {
	t.Helper()
	if realKarmada == "" {
		t.Skip("no real Karmada control plane: set E2E_KARMADA_REAL_KUBECONFIG (make test-karmada starts one)")
	}
}

// Karmada reconciles in its own time (cluster status every 10 s, works, dispatch): allow for it.
const karmadaTimeout = 3 * time.Minute

// eventually polls cond until it returns nil, and fails with its last error.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, karmadaTimeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s: %v", karmadaTimeout, what, last)
	}
}

// karmadaNamespace creates a namespace on the control plane only (Karmada creates it in every
// member) and removes it everywhere when the test ends. A failed test logs Karmada's Works and
// bindings first, and the control plane's logs stay in $TESTBED_DIR/karmada-logs after down.
func karmadaNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := namespace(t, prefix, karmadaCtx)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := runKubectl(karmadaCtx, "get", "works.work.karmada.io", "-A", "-o", "wide")
			t.Logf("Karmada's Works when the test failed:\n%s", out)
			out, _ = runKubectl(karmadaCtx, "get", "resourcebindings.work.karmada.io", "-n", ns, "-o", "wide")
			t.Logf("ResourceBindings of %s:\n%s", ns, out)
		}
	})
	t.Cleanup(func() {
		for _, m := range members {
			_ = clients[m].kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	eventually(t, "Karmada to create namespace "+ns+" in the members", func() error {
		for _, m := range members {
			if _, err := clients[m].kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("%s: %v", m, err)
			}
		}
		return nil
	})
	return ns
}

// serveImage runs serve's pods where member1 and member2 have real nodes (make test-karmada sets
// it, from test/testbed/node.sh env): the test bed's echo server, which answers with its node's
// name. Empty on kwok members, whose pods run nothing: the seed's own image is kept there.
var serveImage = os.Getenv("E2E_SERVE_IMAGE")

// serveOnControlPlane writes the seed guide's serve Deployment and Service on the control plane.
func serveOnControlPlane(t *testing.T, ns string, replicas int32) {
	t.Helper()
	container := corev1.Container{
		Name: "serve", Image: "jeremyot/serve:0a40de8",
		Args:  []string{"--message='hello from cluster member (Node: {{env \"NODE_NAME\"}} Pod: {{env \"POD_NAME\"}} Address: {{addr}})'"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	if serveImage != "" {
		container.Image, container.Args = serveImage, []string{"-ports=8080"}
		container.Env = []corev1.EnvVar{
			{Name: "CLUSTER", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "serve"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "serve"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			},
		},
	}
	if _, err := clients[karmadaCtx].kube.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("karmada: creating deployment %s/serve: %v", ns, err)
	}
	service(t, karmadaCtx, ns, "serve", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
	})
}

// scaleOnControlPlane changes the Deployment's replicas where Karmada owns it.
func scaleOnControlPlane(t *testing.T, ns string, replicas int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := clients[karmadaCtx].kube.AppsV1().Deployments(ns).Patch(context.Background(), "serve", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// readyPodIPs waits for n running pods of serve in cluster c and returns their IPs.
func readyPodIPs(t *testing.T, c, ns string, n int) []string {
	t.Helper()
	var ips []string
	eventually(t, fmt.Sprintf("%d running serve pods in %s", n, c), func() error {
		ips = podIPs(t, c, ns, "serve")
		if len(ips) != n {
			return fmt.Errorf("%s: pod IPs %v", c, ips)
		}
		return nil
	})
	return ips
}

// sliceAddresses is every address of the EndpointSlices of service svc in cluster c, sorted,
// and the slices' names.
func sliceAddresses(t *testing.T, c, ns, svc string) (addrs, slices []string) {
	t.Helper()
	l, err := clients[c].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	for _, s := range l.Items {
		slices = append(slices, s.Name)
		for _, e := range s.Endpoints {
			addrs = append(addrs, e.Addresses...)
		}
	}
	sort.Strings(addrs)
	return addrs, slices
}

// slicesFollow waits until the consumer's slices of svc hold exactly the provider's pod IPs.
func slicesFollow(t *testing.T, consumer, ns, svc string, want []string) []string {
	t.Helper()
	var names []string
	eventually(t, fmt.Sprintf("%s's EndpointSlices of %s to hold %v", consumer, svc, want), func() error {
		var got []string
		got, names = sliceAddresses(t, consumer, ns, svc)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: addresses %v in slices %v", consumer, got, names)
		}
		return nil
	})
	return names
}

func exists(c string, gvr schema.GroupVersionResource, ns, name string) (bool, error) {
	_, err := clients[c].dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

var (
	svcGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// waitGone waits until none of the named objects exist in cluster c.
func waitGone(t *testing.T, c, ns string, objs map[schema.GroupVersionResource][]string) {
	t.Helper()
	eventually(t, "Karmada to remove what it had placed in "+c, func() error {
		var left []string
		for gvr, names := range objs {
			for _, n := range names {
				ok, err := exists(c, gvr, ns, n)
				if err != nil {
					return err
				}
				if ok {
					left = append(left, gvr.Resource+"/"+n)
				}
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%s still holds %v", c, left)
		}
		return nil
	})
}

// noneOfOurs waits until the control plane holds no object expose wrote (Karmada's finalizers
// keep a deleted MultiClusterService or PropagationPolicy for a moment).
func noneOfOurs(t *testing.T, ns string) {
	t.Helper()
	eventually(t, "no object of ours left on the control plane", func() error {
		for _, gvr := range []schema.GroupVersionResource{mcsGVR, ppGVR, seGVR("v1alpha1"), siGVR("v1alpha1")} {
			l, err := clients[karmadaCtx].dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubectl-mcs"})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return fmt.Errorf("karmada: %d %s of ours left after unexpose (finalizers %v)", len(l.Items), gvr.Resource, l.Items[0].GetFinalizers())
			}
		}
		return nil
	})
}

// requestFromConsumer is the seeds' last step with real pods: a pod in member2 calls svc by its
// name in the cluster (seed 002: serve.NS.svc; 001/004: derived-serve.NS.svc), and member1's pod
// answers through the Service and EndpointSlices Karmada gave member2. Only where member1 and
// member2 have real nodes (serveImage).
func requestFromConsumer(t *testing.T, ns, svc string) {
	t.Helper()
	if serveImage == "" {
		t.Log("no request from a pod: member1 and member2 have no real nodes (E2E_SERVE_IMAGE unset)")
		return
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "request-" + svc, Namespace: ns},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: "request", Image: serveImage, Command: []string{"sleep", "infinity"}}},
		},
	}
	if _, err := clients["member2"].kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("member2: creating pod %s/%s: %v", ns, pod.Name, err)
	}
	url := fmt.Sprintf("http://%s.%s.svc/", svc, ns)
	eventually(t, "a request from a pod in member2 to "+url+" answered by member1", func() error {
		out, err := runKubectl("member2", "-n", ns, "exec", pod.Name, "--", "curl", "-sS", "--max-time", "2", url)
		if err != nil || !strings.Contains(string(out), " member1-node tcp 8080") {
			return fmt.Errorf("curl %s: %v: %s", url, err, out)
		}
		t.Logf("member2 -> %s: %s", url, strings.TrimSpace(string(out)))
		return nil
	})
}

// seedWorkloadPolicy is the PropagationPolicy of the seed guides placing serve in member1.
func seedWorkloadPolicy(t *testing.T, ns string) {
	t.Helper()
	pp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": "mcs-workload", "namespace": ns},
		"spec": map[string]any{
			"resourceSelectors": []any{
				map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "serve"},
				map[string]any{"apiVersion": "v1", "kind": "Service", "name": "serve"},
			},
			"placement": map[string]any{"clusterAffinity": map[string]any{"clusterNames": []any{"member1"}}},
		},
	}}
	if _, err := clients[karmadaCtx].dyn.Resource(ppGVR).Namespace(ns).Create(context.Background(), pp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("karmada: creating PropagationPolicy mcs-workload: %v", err)
	}
}

// TestKarmadaRealMultiClusterService is seed 000/002: serve runs in member1 (placed there by the
// seed's PropagationPolicy); expose writes a MultiClusterService with member1 as provider and
// member2 as consumer; Karmada gives member2 the Service and EndpointSlices holding member1's pod
// IPs, follows a scale-up, reports ServiceApplied and EndpointSliceDispatched; unexpose undoes it.
func TestKarmadaRealMultiClusterService(t *testing.T) {
	needRealKarmada(t)
	ns := karmadaNamespace(t, "e2e-real-mcs")
	serveOnControlPlane(t, ns, 2)
	seedWorkloadPolicy(t, ns)
	ips := readyPodIPs(t, "member1", ns, 2)

	r := mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers=member1", "--consumers=member2")
	t.Logf("expose:\n%s", r.stdout)

	eventually(t, "member2 to get Service serve", func() error {
		ok, err := exists("member2", svcGVR, ns, "serve")
		if err == nil && !ok {
			err = fmt.Errorf("no Service %s/serve in member2", ns)
		}
		return err
	})
	names := slicesFollow(t, "member2", ns, "serve", ips)
	t.Logf("member2 slices of serve: %v, addresses %v (member1's pod IPs)", names, ips)
	requestFromConsumer(t, ns, "serve")

	scaleOnControlPlane(t, ns, 3)
	ips = readyPodIPs(t, "member1", ns, 3)
	slicesFollow(t, "member2", ns, "serve", ips)
	scaleOnControlPlane(t, ns, 1)
	ips = readyPodIPs(t, "member1", ns, 1)
	slicesFollow(t, "member2", ns, "serve", ips)

	// Karmada's own conditions, as status --karmada shows them.
	var m status.KarmadaMCSStatus
	eventually(t, "ServiceApplied and EndpointSliceDispatched True in status --karmada", func() error {
		r := mcs("status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "json")
		if r.code != 0 {
			return fmt.Errorf("status: exit %d: %s", r.code, r.stderr)
		}
		var l status.KarmadaServiceStatusList
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
			return err
		}
		if len(l.MultiClusterServices) != 1 {
			return fmt.Errorf("MultiClusterServices %+v", l.MultiClusterServices)
		}
		m = l.MultiClusterServices[0]
		got := map[string]metav1.ConditionStatus{}
		for _, c := range m.Conditions {
			got[c.Type] = c.Status
		}
		if got["ServiceApplied"] != metav1.ConditionTrue || got["EndpointSliceDispatched"] != metav1.ConditionTrue {
			return fmt.Errorf("conditions %+v", m.Conditions)
		}
		if m.Health != status.Healthy {
			return fmt.Errorf("health %s, problems %v", m.Health, m.Problems)
		}
		return nil
	})
	r = mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "wide")
	t.Logf("status --karmada:\n%s", r.stdout)
	f := row(t, r.stdout, ns, "serve")
	if cell(t, r.stdout, f, "SERVICE-APPLIED") != "True" || cell(t, r.stdout, f, "ENDPOINTSLICE-DISPATCHED") != "True" {
		t.Errorf("status table:\n%s", r.stdout)
	}

	// Scenario 3: unexpose removes the MultiClusterService; Karmada withdraws what it dispatched
	// to member2, and member1 keeps what the seed's own policy placed there.
	// Karmada races here: a slice that member1's EndpointSlice controller replaces while the
	// MultiClusterService is being deleted is still collected and dispatched after its cleanup,
	// and stays in member2 for good. Let member1's slices settle (the same names, dispatched to
	// member2 as member1-NAME, twice in a row) before deleting.
	settled := 0
	eventually(t, "member1's slices of serve to settle and reach member2", func() error {
		_, src := sliceAddresses(t, "member1", ns, "serve")
		_, dst := sliceAddresses(t, "member2", ns, "serve")
		var want []string
		for _, n := range src {
			want = append(want, "member1-"+n)
		}
		var got []string
		for _, n := range dst {
			if strings.HasPrefix(n, "member1-") {
				got = append(got, n)
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(want, got) {
			settled = 0
			return fmt.Errorf("member1 slices %v, dispatched to member2 %v", src, got)
		}
		if settled++; settled < 4 {
			return fmt.Errorf("settling")
		}
		return nil
	})
	r = mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
	t.Logf("unexpose:\n%s", r.stdout)
	noneOfOurs(t, ns)
	waitGone(t, "member2", ns, map[schema.GroupVersionResource][]string{svcGVR: {"serve"}})
	eventually(t, "member2's dispatched EndpointSlices to go", func() error {
		if a, s := sliceAddresses(t, "member2", ns, "serve"); len(s) > 0 {
			return fmt.Errorf("member2 slices %v (addresses %v)", s, a)
		}
		return nil
	})
	// Karmada hands the Service back from the MultiClusterService's binding to the seed's policy.
	eventually(t, "member1 to keep Service serve (placed by the seed's policy, not ours)", func() error {
		ok, err := exists("member1", svcGVR, ns, "serve")
		if err == nil && !ok {
			err = fmt.Errorf("no Service %s/serve in member1", ns)
		}
		return err
	})
}

// TestKarmadaRealServiceExport is seed 001/004 in one command: with the Deployment and Service
// only on the control plane, expose --api=serviceexport --propagate --workload=deployment/serve
// has Karmada run serve in member1, export it there, and give member2 the ServiceImport,
// derived-serve and its EndpointSlices; unexpose has Karmada remove the export and the import side,
// while serve itself stays in member1 until its templates go (Karmada keeps what a deleted
// PropagationPolicy placed).
func TestKarmadaRealServiceExport(t *testing.T) {
	needRealKarmada(t)
	ns := karmadaNamespace(t, "e2e-real-se")
	serveOnControlPlane(t, ns, 2)

	r := mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport",
		"--providers=member1", "--consumers=member2", "--propagate", "--workload=deployment/serve")
	t.Logf("expose:\n%s", r.stdout)

	ips := readyPodIPs(t, "member1", ns, 2)
	eventually(t, "member1 to hold the ServiceExport and member2 the ServiceImport and derived-serve", func() error {
		for _, o := range []struct {
			c    string
			gvr  schema.GroupVersionResource
			name string
		}{{"member1", svcGVR, "serve"}, {"member1", seGVR("v1alpha1"), "serve"}, {"member2", siGVR("v1alpha1"), "serve"}, {"member2", svcGVR, "derived-serve"}} {
			ok, err := exists(o.c, o.gvr, ns, o.name)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no %s %s/%s in %s", o.gvr.Resource, ns, o.name, o.c)
			}
		}
		return nil
	})
	names := slicesFollow(t, "member2", ns, "derived-serve", ips)
	t.Logf("member2 slices of derived-serve: %v, addresses %v (member1's pod IPs)", names, ips)
	for _, m := range []string{"member2", "member3"} {
		if ok, _ := exists(m, deployGVR, ns, "serve"); ok {
			t.Errorf("%s runs serve: the workload policy places it in member1 only", m)
		}
	}
	if ok, _ := exists("member3", svcGVR, ns, "derived-serve"); ok {
		t.Error("member3 got derived-serve: it is no consumer")
	}
	scaleOnControlPlane(t, ns, 3)
	slicesFollow(t, "member2", ns, "derived-serve", readyPodIPs(t, "member1", ns, 3))
	requestFromConsumer(t, ns, "derived-serve")

	// Scenario 3: unexpose.
	r = mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
	t.Logf("unexpose:\n%s", r.stdout)
	noneOfOurs(t, ns)
	waitGone(t, "member1", ns, map[schema.GroupVersionResource][]string{seGVR("v1alpha1"): {"serve"}})
	waitGone(t, "member2", ns, map[schema.GroupVersionResource][]string{svcGVR: {"derived-serve"}, siGVR("v1alpha1"): {"serve"}})
	eventually(t, "member2's slices of derived-serve to go", func() error {
		if a, s := sliceAddresses(t, "member2", ns, "derived-serve"); len(s) > 0 {
			return fmt.Errorf("member2 slices %v (addresses %v)", s, a)
		}
		return nil
	})
	// Karmada's rule: deleting a PropagationPolicy does not withdraw what it placed (the binding
	// lives as long as the resource template, here the user's Deployment and Service on the
	// control plane). serve keeps running in member1 until those are deleted or placed otherwise.
	for _, gvr := range []schema.GroupVersionResource{deployGVR, svcGVR} {
		if ok, err := exists("member1", gvr, ns, "serve"); err != nil || !ok {
			t.Errorf("member1: %s serve gone after unexpose (%v): Karmada used to keep it", gvr.Resource, err)
		}
	}
	if err := clients[karmadaCtx].kube.AppsV1().Deployments(ns).Delete(context.Background(), "serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := clients[karmadaCtx].kube.CoreV1().Services(ns).Delete(context.Background(), "serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "member1", ns, map[schema.GroupVersionResource][]string{svcGVR: {"serve"}, deployGVR: {"serve"}})
}

// TestKarmadaRealWebhookRefuses: what only the real karmada-webhook refuses reaches the user as
// one line naming the control plane and the object, and nothing is written.
func TestKarmadaRealWebhookRefuses(t *testing.T) {
	needRealKarmada(t)
	ns := namespace(t, "e2e-real-webhook", karmadaCtx)
	service(t, karmadaCtx, ns, "serve")
	one := func(t *testing.T, r result, want ...string) {
		t.Helper()
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 {
			t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr %q does not mention %q", r.stderr, w)
			}
		}
		t.Logf("refused: %s", strings.TrimSpace(r.stderr))
	}

	t.Run("cluster name over 48 characters", func(t *testing.T) {
		long := strings.Repeat("m", 49)
		// The real webhook refuses it (Karmada's cluster names stop at 48 characters) ...
		direct := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterService",
			"metadata": map[string]any{"name": "serve", "namespace": ns},
			"spec":     map[string]any{"types": []any{"CrossCluster"}, "consumerClusters": []any{map[string]any{"name": long}}},
		}}
		_, err := clients[karmadaCtx].dyn.Resource(mcsGVR).Namespace(ns).Create(context.Background(), direct, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "no more than 48 characters") {
			t.Fatalf("karmada-webhook on a 49-character consumer: %v", err)
		}
		t.Logf("karmada-webhook: %v", err)
		// ... and expose refuses it first, in one line, writing nothing.
		r := mcs("expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers=member1", "--consumers="+long)
		one(t, r, "--consumers", long, "no more than 48")
		if n := count(t, mcsGVR, ns, karmadaCtx); n != 0 {
			t.Errorf("%d MultiClusterServices written", n)
		}
	})
	t.Run("consumer that is not a member", func(t *testing.T) {
		// Karmada accepts it (its webhook checks only the name) and reports ServiceApplied and
		// EndpointSliceDispatched True with nothing consumed anywhere: expose refuses it first.
		for _, api := range []string{"multiclusterservice", "serviceexport"} {
			r := mcs("expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api="+api, "--providers=member1", "--consumers=member2,member9")
			one(t, r, `cluster "karmada"`, "--consumers", `"member9"`, "not a member cluster", "member1, member2, member3")
		}
		r := mcs("expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers=member7")
		one(t, r, `cluster "karmada"`, "--providers", `"member7"`, "not a member cluster")
		for _, gvr := range []schema.GroupVersionResource{mcsGVR, ppGVR, seGVR("v1alpha1"), siGVR("v1alpha1")} {
			if n := count(t, gvr, ns, karmadaCtx); n != 0 {
				t.Errorf("%d %s written", n, gvr.Resource)
			}
		}
	})
	t.Run("types are immutable", func(t *testing.T) {
		mustMCS(t, "expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers=member1", "--consumers=member2")
		before := get(t, karmadaCtx, mcsGVR, ns, "serve")
		r := mcs("expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--providers=member1", "--consumers=member2", "--type=LoadBalancer")
		one(t, r, `cluster "karmada"`, "multiclusterservice", "serve", "denied", "immutable")
		after := get(t, karmadaCtx, mcsGVR, ns, "serve")
		// Karmada's controller updates it meanwhile (finalizer, status): compare the spec.
		bt, _, _ := unstructured.NestedStringSlice(before.Object, "spec", "types")
		at, _, _ := unstructured.NestedStringSlice(after.Object, "spec", "types")
		if before.GetGeneration() != after.GetGeneration() || !slices.Equal(bt, at) {
			t.Errorf("the refused expose changed the MultiClusterService (generation %d -> %d, types %v -> %v)", before.GetGeneration(), after.GetGeneration(), bt, at)
		}
		mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
	})
}
