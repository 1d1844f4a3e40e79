//go:build e2e

// Package e2e runs the kubectl-mcs binary against the real API servers of the local test bed
// (test/testbed). `make test` starts the test bed and sets the variables read here.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig = os.Getenv("E2E_KUBECONFIG")
	binary     = os.Getenv("E2E_BINARY")
	// The Karmada material is not part of the repository: Karmada's CRDs (MultiClusterService,
	// PropagationPolicy, ...) and Karmada's sources, whose charts/karmada/_crds/bases/multicluster/
	// holds the mcs-api CRDs Karmada bundles. Without it the tests that need it skip.
	karmadaCRDs    = envOr("E2E_KARMADA_CRDS", "../../../shared/testdata/karmada-crds")
	karmadaSources = envOr("E2E_KARMADA_SOURCES", "../../../shared/karmada")
	// members are the plain clusterset; karmadaCtx acts as a Karmada control plane; dualStack is
	// a dual-stack cluster (TESTBED_DUALSTACK), outside members so that the tests over the
	// clusterset do not change, for the tests that name it.
	members    = []string{"member1", "member2", "member3"}
	karmadaCtx = "karmada"
	dualStack  = "member4"
	clients    = map[string]*cluster{}
	// karmadaMissing says why the Karmada stand-in could not be set up; empty when it was.
	karmadaMissing string
	// realKarmada is the kubeconfig of a test bed whose "karmada" context is a real Karmada
	// control plane (test/testbed/karmada.sh: member1-3 joined in Push mode). When set, it is the
	// suite's kubeconfig, and only the tests of karmada_real_test.go have what they need: the
	// stand-in tests skip, and there is no dual-stack member. make test-karmada sets it.
	realKarmada = os.Getenv("E2E_KARMADA_REAL_KUBECONFIG")
)

// needKarmada skips a test that needs the Karmada stand-in when it could not be set up.
func needKarmada(t *testing.T) {
	t.Helper()
	if karmadaMissing != "" {
		t.Skip("no Karmada stand-in: " + karmadaMissing)
	}
}

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
	if realKarmada != "" {
		kubeconfig = realKarmada
		dualStack = ""
	}
	if kubeconfig == "" || binary == "" {
		return errors.New("E2E_KUBECONFIG and E2E_BINARY must be set (run: make test-e2e)")
	}
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return err
	}
	for _, ctx := range append(append([]string{}, members...), karmadaCtx, dualStack) {
		if ctx == "" {
			continue
		}
		if _, ok := raw.Contexts[ctx]; !ok && ctx == karmadaCtx {
			karmadaMissing = fmt.Sprintf("no context %q in %s (start the test bed with: testbed.sh up member1 member2 member3 karmada)", karmadaCtx, kubeconfig)
			continue
		}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: ctx}).ClientConfig()
		if err != nil {
			return fmt.Errorf("context %s: %w", ctx, err)
		}
		// The tests' own reads are not rate-limited: client-go's default 5 QPS made listing
		// every watched resource of the members (diagnoseRun, before and after) take 7 s.
		cfg.QPS, cfg.RateLimiter = -1, nil
		c := &cluster{}
		c.kube = kubernetes.NewForConfigOrDie(cfg)
		c.dyn = dynamic.NewForConfigOrDie(cfg)
		clients[ctx] = c
	}
	// The plugin's CRDs go into the members only: the control plane keeps Karmada's own.
	initCtx := append([]string{}, members...)
	if dualStack != "" {
		initCtx = append(initCtx, dualStack)
	}
	if r := mcs("init", "--contexts", strings.Join(initCtx, ",")); r.code != 0 {
		return fmt.Errorf("kubectl mcs init: %s", r.stderr)
	}
	if realKarmada != "" && karmadaMissing == "" {
		// A real control plane has Karmada's CRDs already (karmada.sh applied them): the stand-in's
		// setup is not for it, nor are the tests written for a stand-in.
		karmadaMissing = "the karmada context is a real Karmada control plane (E2E_KARMADA_REAL_KUBECONFIG); the stand-in tests run in make test-e2e"
		return nil
	}
	if karmadaMissing != "" {
		return nil
	}
	karmadaMissing, err = setupKarmada()
	return err
}

// setupKarmada makes the karmada context look like a Karmada control plane: Karmada's CRDs and
// the mcs-api CRDs Karmada bundles (v0.1.0-era v1alpha1: ServiceExport without spec), never the
// plugin's. It returns why it could not, when the Karmada material is absent.
func setupKarmada() (missing string, err error) {
	crds, _ := filepath.Glob(filepath.Join(karmadaCRDs, "*.yaml"))
	if len(crds) == 0 {
		return fmt.Sprintf("no Karmada CRDs at %s (set E2E_KARMADA_CRDS)", karmadaCRDs), nil
	}
	bundled := filepath.Join(karmadaSources, "charts", "karmada", "_crds", "bases", "multicluster")
	mcsCRDs, _ := filepath.Glob(filepath.Join(bundled, "*.yaml"))
	if len(mcsCRDs) == 0 {
		return fmt.Sprintf("no Karmada mcs-api CRDs at %s (set E2E_KARMADA_SOURCES to Karmada's sources)", bundled), nil
	}
	// A test bed reused from a run that put the plugin's CRDs there: remove them, so that the
	// served schema is Karmada's and not a merge of both.
	if out, err := runKubectl(karmadaCtx, "delete", "crd", "-l", "app.kubernetes.io/managed-by=kubectl-mcs", "--ignore-not-found", "--wait"); err != nil {
		return "", fmt.Errorf("removing the plugin's CRDs from %s: %v: %s", karmadaCtx, err, out)
	}
	args := []string{"apply", "--server-side", "--force-conflicts"}
	for _, f := range append(crds, mcsCRDs...) {
		args = append(args, "-f", f)
	}
	if out, err := runKubectl(karmadaCtx, args...); err != nil {
		return "", fmt.Errorf("installing Karmada CRDs: %v: %s", err, out)
	}
	if out, err := runKubectl(karmadaCtx, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/multiclusterservices.networking.karmada.io", "crd/propagationpolicies.policy.karmada.io",
		"crd/serviceexports.multicluster.x-k8s.io", "crd/serviceimports.multicluster.x-k8s.io"); err != nil {
		return "", fmt.Errorf("waiting for Karmada CRDs: %v: %s", err, out)
	}
	return "", nil
}
