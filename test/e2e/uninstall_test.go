//go:build e2e

package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// uninstallKinds are what install, the DNS server's manifests, init --dns, expose and sync
// write, and the user's objects beside them: every object of these kinds, in every namespace,
// is compared before and after (Leases and Events, which the control plane rewrites all the
// time, are not).
var uninstallKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "pods"},
	{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	crdGVR,
	seGVR("v1beta1"),
	siGVR("v1beta1"),
	cpGVR,
}

// memberState is every object of uninstallKinds in one member, "RESOURCE NS/NAME" -> "UID RV",
// and its Corefile (the ConfigMap's resourceVersion changes with every edit; its data is what
// must come back).
type memberState struct {
	objects  map[string]string
	corefile string
}

func readState(t *testing.T, c string) memberState {
	t.Helper()
	s := memberState{objects: map[string]string{}, corefile: corefile(t, c)}
	// A namespace an earlier test's cleanup is deleting is not this test's: it and what it holds
	// are left out.
	nss, err := clients[c].kube.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	leaving := map[string]bool{}
	for _, n := range nss.Items {
		leaving[n.Name] = n.DeletionTimestamp != nil
	}
	for _, gvr := range uninstallKinds {
		l, err := clients[c].dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // the mcs-api kinds without their CRDs
		}
		if err != nil {
			t.Fatalf("%s: listing %s: %v", c, gvr.Resource, err)
		}
		for _, o := range l.Items {
			key := gvr.Resource + " " + o.GetNamespace() + "/" + o.GetName()
			if key == "configmaps kube-system/coredns" || leaving[o.GetNamespace()] || gvr.Resource == "namespaces" && leaving[o.GetName()] {
				continue
			}
			s.objects[key] = string(o.GetUID()) + " " + o.GetResourceVersion()
		}
	}
	return s
}

func states(t *testing.T) map[string]memberState {
	t.Helper()
	out := map[string]memberState{}
	for _, c := range members {
		out[c] = readState(t, c)
	}
	return out
}

// sameState fails for every object that differs between want and got, and the Corefile.
func sameState(t *testing.T, what string, want, got map[string]memberState) {
	t.Helper()
	for _, c := range members {
		w, g := want[c], got[c]
		if w.corefile != g.corefile {
			t.Errorf("%s: %s: the Corefile is\n%s\nwant\n%s", what, c, g.corefile, w.corefile)
		}
		for _, k := range slices.Sorted(maps.Keys(w.objects)) {
			if g.objects[k] != w.objects[k] {
				t.Errorf("%s: %s: %s is %q, was %q", what, c, k, g.objects[k], w.objects[k])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g.objects)) {
			if _, ok := w.objects[k]; !ok {
				t.Errorf("%s: %s: %s is there, was not", what, c, k)
			}
		}
	}
}

// deleteCRDs takes the members back to before init: no mcs-api CRD and no ClusterProperty CRD
// (the suite's init puts the mcs-api CRDs back at the end, for the other tests; a test that reads
// ClusterProperties installs their CRD itself).
func deleteCRDs(t *testing.T) {
	t.Helper()
	for _, c := range members {
		for _, n := range []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io", "clusterproperties.about.k8s.io"} {
			if err := clients[c].dyn.Resource(crdGVR).Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			waitFor(t, c+": crd "+n+" gone", func() bool {
				_, err := clients[c].dyn.Resource(crdGVR).Get(context.Background(), n, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
		}
	}
}

// applyDNSServers applies dns-server --print-manifests in every member, as an operator does.
func applyDNSServers(t *testing.T) {
	t.Helper()
	for _, c := range members {
		f := filepath.Join(t.TempDir(), c+"-dns-server.yaml")
		if err := os.WriteFile(f, []byte(mustMCS(t, "dns-server", "--print-manifests", "--context", c).stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := runKubectl(c, "apply", "--server-side", "-f", f); err != nil {
			t.Fatalf("%s: applying dns-server --print-manifests: %v: %s", c, err, out)
		}
	}
}

// TestUninstall sets every member up as the docs do (the DNS servers, init --dns, install in
// either mode, an export and a sync), then uninstalls: --dry-run=client changes nothing, --crds
// is refused while exports exist, without --crds the CRDs and exports stay, and with
// --sync-objects --crds --force every member is back to what it held before init (init
// --clusterset's ClusterProperties and their CRD gone too), the user's
// objects with the same UIDs and resourceVersions; the forward leaves every Corefile before any
// DNS server goes; a second uninstall is a no-op; an unreachable member is named and the others
// cleaned.
func TestUninstall(t *testing.T) {
	t.Cleanup(func() { mustMCS(t, "init", "--contexts", allMembers) }) // the other tests need the CRDs
	for _, mode := range []string{install.ModeHost, install.ModePerMember} {
		t.Run(mode, func(t *testing.T) { uninstallMode(t, mode) })
	}
}

func uninstallMode(t *testing.T, mode string) {
	for _, c := range members {
		setCorefile(t, c, kubeadmCorefile)
	}
	ns := namespace(t, "uninstall", members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	service(t, "member2", ns, "mine")
	waitFor(t, "member1's endpoints", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 2 })
	deleteCRDs(t)
	before := states(t)

	applyDNSServers(t)
	mustMCS(t, "init", "--contexts", allMembers, "--dns", "--dns-wait=90s", "--clusterset=e2e-uninstall")
	// A failed step leaves nothing behind for the next test (the CRDs: TestUninstall's cleanup).
	t.Cleanup(func() { mcs("uninstall", "--contexts", allMembers, "--sync-objects") })
	args := []string{"install", noWait, "--contexts", allMembers, memberServers(t, members...), "--image=kubectl-mcs/kubectl-mcs:e2e",
		"--memory-request=200Mi", "--memory-limit=1Gi"}
	if mode == install.ModePerMember {
		args = append(args, "--mode=per-member")
	} else {
		args = append(args, "--context=member1")
	}
	mustMCS(t, args...)
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	userExport(t, "member2", ns, "mine")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if derivedService(t, "member3", ns, "serve") == nil {
		t.Fatal("member3: no derived Service after the sync")
	}

	// --dry-run=client deletes nothing, and says what it would.
	installed := states(t)
	r := mustMCS(t, "uninstall", "--contexts", allMembers, "--sync-objects", "--crds", "--force", "--dry-run=client")
	if !strings.Contains(r.stdout, "member3: serviceimport.multicluster.x-k8s.io/serve deleted (dry run) -n "+ns) ||
		!strings.Contains(r.stdout, "member1: configmap/coredns configured (clusterset DNS removed) (dry run) -n kube-system") {
		t.Errorf("uninstall --dry-run=client output:\n%s", r.stdout)
	}
	sameState(t, "after uninstall --dry-run=client", installed, states(t))

	// --crds while exports exist: refused, naming both, changing nothing.
	r = mcs("uninstall", "--contexts", allMembers, "--crds")
	if r.code != 1 || !strings.Contains(r.stderr, `cluster "member1": `+ns+"/serve") || !strings.Contains(r.stderr, `cluster "member2": `+ns+"/mine") {
		t.Errorf("uninstall --crds with exports: exit %d:\n%s", r.code, r.stderr)
	}
	sameState(t, "after the refused uninstall --crds", installed, states(t))

	cleaned := members
	if mode == install.ModePerMember {
		unreachableMember(t)
		cleaned = []string{"member3"}
	}

	// Without --crds: the imports go, the CRDs and the exports stay.
	exports := exportUIDs(t, ns)
	r = mustMCS(t, "uninstall", "--contexts", allMembers, "--sync-objects")
	checkOrder(t, r.stdout, cleaned)
	if got := exportUIDs(t, ns); !maps.Equal(got, exports) {
		t.Errorf("uninstall without --crds changed the exports: %v, were %v", got, exports)
	}
	for _, c := range members {
		if n := count(t, siGVR("v1beta1"), ns, c); n != 0 {
			t.Errorf("%s: %d ServiceImports left by uninstall --sync-objects", c, n)
		}
		// The clusterset stays without --crds: other MCS controllers read the cluster ID.
		if id := property(t, c, "cluster.clusterset.k8s.io"); id != c {
			t.Errorf("%s: cluster.clusterset.k8s.io = %q after uninstall without --crds, want %q", c, id, c)
		}
	}

	r = mustMCS(t, "uninstall", "--contexts", allMembers, "--sync-objects", "--crds", "--force")
	for _, c := range members {
		for _, crd := range []string{"serviceexports.multicluster.x-k8s.io", "clusterproperties.about.k8s.io"} {
			if !strings.Contains(r.stdout, c+": customresourcedefinition.apiextensions.k8s.io/"+crd+" deleted") {
				t.Errorf("%s: CRD %s not deleted:\n%s", c, crd, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, c+": clusterproperty.about.k8s.io/cluster.clusterset.k8s.io deleted") {
			t.Errorf("%s: its cluster ID property not deleted:\n%s", c, r.stdout)
		}
	}
	sameState(t, "after uninstall --sync-objects --crds --force", before, states(t))

	r = mustMCS(t, "uninstall", "--contexts", allMembers, "--sync-objects", "--crds", "--force")
	if r.stdout != "" || !strings.Contains(r.stderr, "No kubectl-mcs objects found") {
		t.Errorf("a second uninstall did something:\n%s\n%s", r.stdout, r.stderr)
	}
}

// exportUIDs are the UIDs of every ServiceExport in ns, by cluster/name.
func exportUIDs(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range members {
		l, err := clients[c].dyn.Resource(seGVR("v1beta1")).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, e := range l.Items {
			out[c+"/"+e.GetName()] = string(e.GetUID()) + " " + e.GetResourceVersion()
		}
	}
	if len(out) != 2 {
		t.Errorf("exports: %v, want serve in member1 (expose's) and mine in member2 (the user's)", out)
	}
	return out
}

// checkOrder holds uninstall's lines to its order: every Corefile's forward removed before any
// DNS server's Deployment is deleted, the DNS servers before any sync, the syncs before what they
// wrote.
func checkOrder(t *testing.T, out string, in []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	first := func(sub string) int {
		return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, sub) })
	}
	last := func(sub string) int {
		n := -1
		for i, l := range lines {
			if strings.Contains(l, sub) {
				n = i
			}
		}
		return n
	}
	forward, dns := "configmap/coredns configured (clusterset DNS removed)", "deployment.apps/"+names.DNSServerName+" deleted"
	sync, imports := "deployment.apps/"+install.Name+" deleted", "serviceimport.multicluster.x-k8s.io/"
	for _, s := range []string{forward, dns, sync, imports} {
		if first(s) < 0 {
			t.Errorf("no line %q in:\n%s", s, out)
		}
	}
	if last(forward) > first(dns) || last(dns) > first(sync) || last(sync) > first(imports) {
		t.Errorf("out of order (Corefile, DNS servers, syncs, imports):\n%s", out)
	}
	for _, c := range in {
		if n := strings.Count(out, c+": "+forward); n != 1 {
			t.Errorf("%s: %d Corefile lines, want 1:\n%s", c, n, out)
		}
	}
}

// unreachableMember: with member3 unreachable, uninstall names it, exits 1, and still cleans the
// others. The next full uninstall finishes member3.
func unreachableMember(t *testing.T) {
	t.Helper()
	kc := kubeconfigWith(t, map[string]string{"gone": closedPort(t)})
	r := runBinary(nil, "--kubeconfig", kc, "uninstall", "--contexts", "member1,member2,gone=member3", "--request-timeout=5s")
	if r.code != 1 || !strings.Contains(r.stderr, `cluster "member3" (context "gone")`) || !strings.Contains(r.stderr, "the other clusters were cleaned") {
		t.Errorf("uninstall with member3 unreachable: exit %d:\n%s", r.code, r.stderr)
	}
	for _, c := range []string{"member1", "member2"} {
		if _, err := clients[c].kube.CoreV1().Namespaces().Get(context.Background(), names.SystemNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: namespace %s still there (%v):\n%s", c, names.SystemNamespace, err, r.stdout)
		}
	}
	if _, err := clients["member3"].kube.AppsV1().Deployments(names.SystemNamespace).Get(context.Background(), install.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("member3: the unreachable member's sync: %v", err)
	}
}
