//go:build e2e

// Package e2e runs the kubectl-mcs binary against the real API servers of the local test bed
// (test/testbed). `make test` starts the test bed and sets the variables read here.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig  = os.Getenv("E2E_KUBECONFIG")
	binary      = os.Getenv("E2E_BINARY")
	karmadaCRDs = envOr("E2E_KARMADA_CRDS", "../../../shared/testdata/karmada-crds")
	// members are the plain clusterset; karmadaCtx acts as a Karmada control plane; dualStack is
	// a dual-stack cluster (TESTBED_DUALSTACK), outside members so that the tests over the
	// clusterset do not change, for the tests that name it.
	members    = []string{"member1", "member2", "member3"}
	karmadaCtx = "karmada"
	dualStack  = "member4"
	clients    = map[string]*cluster{}
)

type cluster struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	if kubeconfig == "" || binary == "" {
		return errors.New("E2E_KUBECONFIG and E2E_BINARY must be set (run: make test-e2e)")
	}
	for _, ctx := range append(append([]string{}, members...), karmadaCtx, dualStack) {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: ctx}).ClientConfig()
		if err != nil {
			return fmt.Errorf("context %s: %w", ctx, err)
		}
		c := &cluster{}
		c.kube = kubernetes.NewForConfigOrDie(cfg)
		c.dyn = dynamic.NewForConfigOrDie(cfg)
		clients[ctx] = c
	}
	// Karmada's own CRDs, unchanged, on the cluster that plays the control plane.
	crds, err := filepath.Glob(filepath.Join(karmadaCRDs, "*.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("no Karmada CRDs at %s", karmadaCRDs)
	}
	args := []string{"--kubeconfig", kubeconfig, "--context", karmadaCtx, "apply", "--server-side", "--force-conflicts"}
	for _, f := range crds {
		args = append(args, "-f", f)
	}
	if out, err := exec.Command("kubectl", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("installing Karmada CRDs: %v: %s", err, out)
	}
	if out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--context", karmadaCtx, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/multiclusterservices.networking.karmada.io", "crd/propagationpolicies.policy.karmada.io").CombinedOutput(); err != nil {
		return fmt.Errorf("waiting for Karmada CRDs: %v: %s", err, out)
	}
	all := strings.Join(append(append([]string{}, members...), karmadaCtx, dualStack), ",")
	if r := mcs("init", "--contexts", all); r.code != 0 {
		return fmt.Errorf("kubectl mcs init: %s", r.stderr)
	}
	return nil
}

type result struct {
	stdout, stderr string
	code           int
}

// mcs runs the plugin binary against the test bed.
func mcs(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_MCS_CONTEXTS=")
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

func runKubectl(ctx string, args ...string) ([]byte, error) {
	return exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--context", ctx}, args...)...).CombinedOutput()
}
