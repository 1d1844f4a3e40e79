package completioncmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/completioncmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// fakeCluster serves the two lists completion reads: namespaces, and the Services of one
// namespace. A derived-* Service carries the managed-by label sync gives it; an ext* one is
// ExternalName.
func fakeCluster(t *testing.T, namespaces []string, services map[string][]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var obj any
		switch parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/"); {
		case r.URL.Path == "/api/v1/namespaces":
			l := &corev1.NamespaceList{TypeMeta: metav1.TypeMeta{Kind: "NamespaceList", APIVersion: "v1"}}
			for _, n := range namespaces {
				l.Items = append(l.Items, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			obj = l
		case len(parts) == 5 && parts[2] == "namespaces" && parts[4] == "services":
			l := &corev1.ServiceList{TypeMeta: metav1.TypeMeta{Kind: "ServiceList", APIVersion: "v1"}}
			for _, n := range services[parts[3]] {
				svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: parts[3]}}
				if strings.HasPrefix(n, "derived-") {
					svc.Labels = map[string]string{names.ManagedByLabel: names.ManagedByValue}
				}
				if strings.HasPrefix(n, "ext") {
					svc.Spec.Type = corev1.ServiceTypeExternalName
				}
				l.Items = append(l.Items, svc)
			}
			obj = l
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(obj)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// kubeconfig writes a kubeconfig with one context (and cluster) per name => server URL, each with
// its default namespace.
func kubeconfig(t *testing.T, current string, contexts map[string]string, namespaces map[string]string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\ncurrent-context: %s\nusers:\n- name: u\n  user: {token: t}\nclusters:\n", current)
	for name, url := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q}\n", name, url)
	}
	b.WriteString("contexts:\n")
	for name := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: u, namespace: %q}\n", name, name, namespaces[name])
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// complete runs `kubectl-mcs __complete ARGS...` in-process, as kubectl_complete-mcs does, and
// returns the candidates (descriptions cut) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out bytes.Buffer
	root := cmd.NewCmdMCS(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %q: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %q: no directive line in %q", args, out.String())
	}
	var comps []string
	for _, l := range lines[:len(lines)-1] {
		comps = append(comps, strings.SplitN(l, "\t", 2)[0])
	}
	return comps, lines[len(lines)-1]
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCompletion(t *testing.T) {
	t.Setenv(clusterset.EnvContexts, "")
	m1 := fakeCluster(t, []string{"default", "demo", "kube-system"}, map[string][]string{"demo": {"derived-serve", "ext", "serve", "web"}, "other": {"x"}, "default": {"app", "kubernetes"}})
	m2 := fakeCluster(t, []string{"default", "demo2"}, map[string][]string{"demo": {"db", "serve"}})
	kc := kubeconfig(t, "member1",
		map[string]string{"member1": m1.URL, "member2": m2.URL, "down": "http://127.0.0.1:1"},
		map[string]string{"member1": "demo", "member2": "demo2"})
	k := "--kubeconfig=" + kc

	noFile := fmt.Sprintf(":%d", cobra.ShellCompDirectiveNoFileComp)
	list := fmt.Sprintf(":%d", cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace)

	t.Run("commands", func(t *testing.T) {
		got, _ := complete(t, "")
		for _, c := range []string{"completion", "diagnose", "expose", "init", "status", "sync", "unexpose", "version"} {
			if !slices.Contains(got, c) {
				t.Errorf("%q missing from %q", c, got)
			}
		}
	})
	t.Run("completion shells", func(t *testing.T) {
		got, _ := complete(t, "completion", "")
		expect(t, got, completioncmd.Shells...)
	})
	t.Run("--context", func(t *testing.T) {
		got, d := complete(t, k, "sync", "--context", "mem")
		expect(t, got, "member1", "member2")
		expect(t, []string{d}, noFile)
	})
	t.Run("--contexts first", func(t *testing.T) {
		got, d := complete(t, k, "expose", "--contexts=")
		expect(t, got, "down", "member1", "member2")
		expect(t, []string{d}, list)
	})
	t.Run("--contexts after a comma leaves out the listed ones", func(t *testing.T) {
		got, _ := complete(t, k, "init", "--contexts", "member1=m1,")
		expect(t, got, "member1=m1,down", "member1=m1,member2")
		got, _ = complete(t, k, "sync", "--contexts=down,member1,m")
		expect(t, got, "down,member1,member2")
	})
	t.Run("--contexts ID", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "--contexts=member1=")
		expect(t, got)
	})
	t.Run("--providers from --contexts IDs", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "--contexts=member1=one,member2=two", "--providers", "one,")
		expect(t, got, "one,two")
	})
	t.Run("--consumers without a clusterset", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "--consumers=member")
		expect(t, got, "member1", "member2")
	})
	t.Run("--dry-run", func(t *testing.T) {
		got, _ := complete(t, k, "unexpose", "--dry-run=")
		expect(t, got, "none", "client", "server")
	})
	t.Run("namespaces of the current context", func(t *testing.T) {
		got, d := complete(t, k, "expose", "-n", "")
		expect(t, got, "default", "demo", "kube-system")
		expect(t, []string{d}, noFile)
	})
	t.Run("namespaces of --context", func(t *testing.T) {
		got, _ := complete(t, k, "--context=member2", "sync", "--namespace", "de")
		expect(t, got, "default", "demo2")
	})
	// Neither sync's derived Services nor ExternalName ones, which expose refuses, are offered.
	t.Run("services of the current context and namespace", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "")
		expect(t, got, "serve", "web")
	})
	// The apiserver's own default/kubernetes is never offered: no member should import another's.
	t.Run("not the apiserver's Service", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "-n", "default", "")
		expect(t, got, "app")
	})
	t.Run("services across the clusterset, unreachable member skipped", func(t *testing.T) {
		got, _ := complete(t, k, "unexpose", "-n", "demo", "--contexts=member1,member2,down", "")
		expect(t, got, "db", "serve", "web")
		got, _ = complete(t, k, "expose", "-n", "demo", "--contexts=member1,member2", "s")
		expect(t, got, "serve")
	})
	t.Run("services from KUBECTL_MCS_CONTEXTS", func(t *testing.T) {
		t.Setenv(clusterset.EnvContexts, "member2")
		got, _ := complete(t, k, "expose", "-n", "demo", "")
		expect(t, got, "db", "serve")
	})
	t.Run("services on the Karmada control plane", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "-n", "demo", "--contexts=member1", "--karmada-context=member2", "")
		expect(t, got, "db", "serve")
	})
	t.Run("one SERVICE only", func(t *testing.T) {
		got, _ := complete(t, k, "expose", "serve", "")
		expect(t, got)
	})
}

func TestCompletionCommand(t *testing.T) {
	for _, shell := range completioncmd.Shells {
		var out bytes.Buffer
		root := cmd.NewCmdMCS(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(out.String(), "kubectl-mcs") || !strings.Contains(out.String(), "__complete") {
			t.Errorf("completion %s: no completion code for kubectl-mcs:\n%.300s", shell, out.String())
		}
	}
	o := &completioncmd.Options{}
	if err := o.Complete([]string{"tcsh"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `unsupported shell "tcsh"`) {
		t.Errorf("tcsh: got %v", err)
	}
	if err := o.Complete(nil); err == nil {
		t.Error("no shell: no error")
	}
}
