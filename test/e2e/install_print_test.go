//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// server is a context's apiserver as the test bed's kubeconfig names it (https://127.0.0.1:PORT).
func server(t *testing.T, ctx string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return raw.Clusters[raw.Contexts[ctx].Cluster].Server
}

// memberServers is --member-server giving each context its kubeconfig's own server: the bed's
// loopback addresses, which the processes of the tests reach (kwok's pods run nothing).
func memberServers(t *testing.T, ctxs ...string) string {
	t.Helper()
	parts := make([]string, len(ctxs))
	for i, c := range ctxs {
		parts[i] = c + "=" + server(t, c)
	}
	return "--member-server=" + strings.Join(parts, ",")
}

// versions are the resourceVersions of what an installation could write in every member:
// "CLUSTER RESOURCE NAMESPACE/NAME" -> resourceVersion.
type versions map[string]string

// installKinds are the kinds an installation writes in a member.
// Namespaces first: readVersions leaves out what is in one being deleted.
var installKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "secrets"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// terminating is the version recorded for a namespace being deleted (by an earlier test's
// cleanup): what goes with it is not the command's doing, and its objects are not recorded.
const terminating = "terminating"

func readVersions(t *testing.T) versions {
	t.Helper()
	out := versions{}
	for _, c := range members {
		going := map[string]bool{}
		for _, gvr := range installKinds {
			l, err := clients[c].dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: listing %s: %v", c, gvr.Resource, err)
			}
			for _, o := range l.Items {
				key, v := fmt.Sprintf("%s %s %s/%s", c, gvr.Resource, o.GetNamespace(), o.GetName()), o.GetResourceVersion()
				if gvr.Resource == "namespaces" && o.GetDeletionTimestamp() != nil {
					going[o.GetName()], v = true, terminating
				}
				if !going[o.GetNamespace()] {
					out[key] = v
				}
			}
		}
	}
	return out
}

// settledVersions reads the versions until two reads a second apart agree (namespaces of earlier
// tests may still be going away).
func settledVersions(t *testing.T) versions {
	t.Helper()
	return settled(t, func() versions { return readVersions(t) })
}

// settled reads until two reads a second apart agree.
func settled(t *testing.T, read func() versions) versions {
	t.Helper()
	v := read()
	for range 60 {
		time.Sleep(time.Second)
		w := read()
		if reflect.DeepEqual(v, w) {
			return w
		}
		v = w
	}
	t.Fatal("the members' objects kept changing for a minute")
	return nil
}

// unchanged fails the test, listing the differences, when anything was created, changed or
// deleted since before.
func unchanged(t *testing.T, before versions, what string) {
	t.Helper()
	after := readVersions(t)
	var diffs []string
	for k, v := range after {
		if w, ok := before[k]; !ok {
			diffs = append(diffs, "created "+k)
		} else if w != v {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok && v != terminating {
			diffs = append(diffs, "deleted "+k)
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s wrote in the members (%d of %d objects):\n%s", what, len(diffs), len(after), strings.Join(diffs, "\n"))
	}
}

// oneError: the command failed with one error line holding want, and printed nothing.
func oneError(t *testing.T, r result, want string) {
	t.Helper()
	var errs []string
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.HasPrefix(l, "error: ") {
			errs = append(errs, l)
		}
	}
	if r.code == 0 || r.stdout != "" || len(errs) != 1 || errs[0] != "error: "+want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant one line: error: %s", r.code, r.stdout, r.stderr, want)
	}
}

// TestInstallPrintWritesNothing: sync --print-manifests reads the tokens install made and writes
// nothing in any member; without them it fails before printing, naming the member and the
// command that makes them.
func TestInstallPrintWritesNothing(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	servers := memberServers(t, "member2", "member3")
	print := []string{"sync", "--print-manifests", "--contexts", allMembers, "--context", "member1", servers}

	before := settledVersions(t)
	r := mcs(print...)
	oneError(t, r, `cluster "member1": no ServiceAccount token in secret kubectl-mcs-system/kubectl-mcs-sync-token: pass --member-credentials=current, or create it with:`)
	if !strings.Contains(r.stderr, "with:\n  kubectl mcs install --contexts=member1,member2,member3 --context=member1\n") {
		t.Errorf("the install command is not on a line of its own:\n%s", r.stderr)
	}
	unchanged(t, before, "sync --print-manifests without tokens")

	mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", servers, noWait)
	before = settledVersions(t)
	for _, args := range [][]string{print, append(print, "-o", "json"), append(print, "--member-credentials=current")} {
		r := mustMCS(t, args...)
		if kinds := kindsOf(decodeAll(t, r.stdout)); !slices.Equal(kinds, []string{"Namespace", "ServiceAccount", "Secret", "Deployment", "PodDisruptionBudget"}) {
			t.Errorf("%s printed %v", strings.Join(args, " "), kinds)
		}
		unchanged(t, before, strings.Join(args, " "))
	}

	// One member without its token: named.
	if err := clients["member3"].kube.CoreV1().Secrets(install.DefaultNamespace).Delete(context.Background(), install.TokenSecret, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	before = settledVersions(t)
	oneError(t, mcs(print...), `cluster "member3": no ServiceAccount token in secret kubectl-mcs-system/kubectl-mcs-sync-token: pass --member-credentials=current, or create it with:`)
	unchanged(t, before, "sync --print-manifests with member3's token gone")
}

// kindsOf are the objects' kinds, a List's items in its place.
func kindsOf(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.IsList() {
			_ = o.EachListItem(func(i runtime.Object) error {
				out = append(out, i.GetObjectKind().GroupVersionKind().Kind)
				return nil
			})
			continue
		}
		out = append(out, o.GetKind())
	}
	return out
}

// TestInstallRefusesLoopback: a member whose kubeconfig server is a loopback address is refused,
// naming it and the flag (every such member in one refusal), by install and --print-manifests alike, before anything is written;
// given explicitly, the address is taken with a warning.
func TestInstallRefusesLoopback(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	before := settledVersions(t)
	refusal := func(c string) string {
		return fmt.Sprintf(`cluster %q: its kubeconfig server %s is a loopback address, which the sync pods in "member1" cannot reach: pass --member-server=%s=https://ADDRESS:PORT`, c, server(t, c), c)
	}
	// Both at fault, named in one refusal, a line each; the host's own loopback never is.
	for _, args := range [][]string{
		{"install", "--contexts", allMembers, "--context", "member1"},
		{"install", "--contexts", allMembers, "--context", "member1", "--member-credentials=current"},
		{"sync", "--print-manifests", "--contexts", allMembers, "--context", "member1", "--member-credentials=current"},
	} {
		r := mcs(args...)
		oneError(t, r, "2 members' kubeconfig servers cannot be reached:")
		if want := "\n  " + refusal("member2") + "\n  " + refusal("member3") + "\n"; !strings.Contains(r.stderr, want) {
			t.Errorf("%s: the refusal does not name both members:\n%s", strings.Join(args, " "), r.stderr)
		}
		unchanged(t, before, strings.Join(args, " "))
	}
	oneError(t, mcs("install", "--contexts", allMembers, "--context", "member1", "--member-server=member2=https://10.0.0.2:6443"), refusal("member3"))
	unchanged(t, before, "install with member3's loopback")

	r := mustMCS(t, "sync", "--print-manifests", "--contexts", allMembers, "--context", "member1", "--member-credentials=current", memberServers(t, "member2", "member3"))
	for _, c := range []string{"member2", "member3"} {
		if w := fmt.Sprintf(`Warning: cluster %q: --member-server=%s=%s is a loopback address, which the sync pods in "member1" cannot reach unless it is their own; taken as asked`, c, c, server(t, c)); !strings.Contains(r.stderr, w) {
			t.Errorf("no warning for %s:\n%s", c, r.stderr)
		}
	}
	unchanged(t, before, "sync --print-manifests with loopback addresses given")
}

// TestInstallDryRunWritesNothing: install --dry-run=client and --dry-run=server say what they
// would write in every cluster and write nothing; --member-credentials=current embeds the
// kubeconfig's own credentials, says so per member, and writes nothing in the members.
func TestInstallDryRunWritesNothing(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	servers := memberServers(t, "member2", "member3")
	before := settledVersions(t)
	for dry, op := range map[string]string{"client": "created (dry run)", "server": "created (server dry run)"} {
		r := mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", servers, "--dry-run="+dry)
		unchanged(t, before, "install --dry-run="+dry)
		for _, line := range []string{
			"member1: namespace/kubectl-mcs-system " + op,
			"member3: clusterrole.rbac.authorization.k8s.io/kubectl-mcs-sync " + op,
			"member1: role.rbac.authorization.k8s.io/kubectl-mcs-sync-leader-election ",
			"member1: deployment.apps/kubectl-mcs-sync ",
			"member1: poddisruptionbudget.policy/kubectl-mcs-sync ",
		} {
			if !strings.Contains(r.stdout, line) {
				t.Errorf("--dry-run=%s: no line %q:\n%s", dry, line, r.stdout)
			}
		}
		if !strings.Contains(r.stderr, `Warning: cluster "member2": dry run: no ServiceAccount token exists yet`) {
			t.Errorf("--dry-run=%s: no warning about the tokens:\n%s", dry, r.stderr)
		}
	}
	r := mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", servers, "--dry-run=client", "-o", "json")
	unchanged(t, before, "install --dry-run=client -o json")
	if objs := decodeAll(t, r.stdout); len(objs) != 1 || objs[0].GetKind() != "List" {
		t.Errorf("-o json: not one List:\n%.400s", r.stdout)
	}

	r = mustMCS(t, "sync", "--print-manifests", "--contexts", allMembers, "--context", "member1", servers, "--member-credentials=current")
	unchanged(t, before, "sync --print-manifests --member-credentials=current")
	for _, c := range members {
		if !strings.Contains(r.stderr, fmt.Sprintf(`Warning: cluster %q: embedding the credentials of context %q`, c, c)) {
			t.Errorf("no warning for %s:\n%s", c, r.stderr)
		}
	}
	s := kubeconfigSecret(t, decodeAll(t, r.stdout))
	for _, c := range members {
		kc, err := clientcmd.Load(s.Data[install.KubeconfigKey(c)])
		if err != nil || kc.AuthInfos[c] == nil || len(kc.AuthInfos[c].ClientCertificateData) == 0 {
			t.Errorf("%s: the kubeconfig does not embed the context's client certificate: %v", c, err)
		}
	}
}

func kubeconfigSecret(t *testing.T, objs []*unstructured.Unstructured) *corev1.Secret {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetName() == install.KubeconfigSecret {
			s := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatal("no kubeconfig Secret")
	return nil
}

// TestInstallThenPrint: what install applied in the host is what --print-manifests prints
// afterwards, the same tokens included; the host's pods reach their own apiserver at
// kubernetes.default.svc, verified with the token Secret's CA, and the others at --member-server.
func TestInstallThenPrint(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	args := []string{"--contexts", allMembers, "--context", "member1", memberServers(t, "member2", "member3"), "--memory-request=200Mi", "--memory-limit=1Gi", "-o", "json"}
	r := mustMCS(t, append([]string{"install", noWait}, args...)...)
	// Every member's objects come first, the host's five last.
	var host []*unstructured.Unstructured
	items := decodeAll(t, r.stdout)[0].Object["items"].([]any)
	for _, o := range items[len(items)-5:] {
		host = append(host, &unstructured.Unstructured{Object: o.(map[string]any)})
	}
	printed := decodeAll(t, mustMCS(t, append([]string{"sync", "--print-manifests"}, args...)...).stdout)[0].Object["items"].([]any)
	if len(printed) != len(host) {
		t.Fatalf("install applied %v in the host, --print-manifests printed %d objects", kindsOf(host), len(printed))
	}
	for i, p := range printed {
		want := p.(map[string]any)
		if !contains(host[i].Object, want) {
			t.Errorf("printed %s %s is not what install applied:\nprinted %v\napplied %v", host[i].GetKind(), host[i].GetName(), want, host[i].Object)
		}
	}

	s := kubeconfigSecret(t, host)
	for c, want := range map[string]string{"member1": install.InClusterServer, "member2": server(t, "member2"), "member3": server(t, "member3")} {
		kc, err := clientcmd.Load(s.Data[install.KubeconfigKey(c)])
		if err != nil || kc.Clusters[c] == nil || kc.Clusters[c].Server != want || len(kc.Clusters[c].CertificateAuthorityData) == 0 {
			t.Errorf("%s: kubeconfig server %v, want %s with the CA (%v)", c, kc.Clusters[c], want, err)
		}
	}
	// The host's pods trust the cluster's own CA, the token Secret's, and no other name: with
	// them, its apiserver's certificate is verified as kubernetes.default.svc.
	tok, err := clients["member1"].kube.CoreV1().Secrets(install.DefaultNamespace).Get(context.Background(), install.TokenSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(s.Data[install.KubeconfigKey("member1")])
	if err != nil {
		t.Fatal(err)
	}
	in := kc.Clusters["member1"]
	if !bytes.Equal(in.CertificateAuthorityData, tok.Data["ca.crt"]) || in.TLSServerName != "" || in.InsecureSkipTLSVerify {
		t.Errorf("member1's in-cluster kubeconfig: CA of %d bytes (the token Secret's %d), TLS server name %q, insecure %v",
			len(in.CertificateAuthorityData), len(tok.Data["ca.crt"]), in.TLSServerName, in.InsecureSkipTLSVerify)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(in.CertificateAuthorityData) {
		t.Fatal("member1's in-cluster CA holds no certificate")
	}
	u, _ := url.Parse(server(t, "member1"))
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: roots, ServerName: "kubernetes.default.svc"})
	if err != nil {
		t.Fatalf("member1's apiserver, verified as its pods would: %v", err)
	}
	conn.Close()
}

// contains says whether got holds every field of want with the same value (lists element by
// element, of the same length): what the apiserver returns holds what was sent, and its defaults.
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}
