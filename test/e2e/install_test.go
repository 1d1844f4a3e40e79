//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// noWait: install returns once written. kwok's pods run nothing, so no leader ever reports on
// its Lease (TestInstallWait plays one).
const noWait = "--wait=false"

// saUser is who the generated kubeconfigs authenticate as in every member.
var saUser = "system:serviceaccount:" + install.DefaultNamespace + ":" + install.Name

// installation is what `kubectl mcs install` installed for host member1, as `sync
// --print-manifests` prints it.
type installation struct {
	manifests  string
	objects    []*unstructured.Unstructured
	kubeconfig string // KUBECONFIG listing the members' files taken from the Secret
	args       []string
}

// TestInstallLeastPrivilege installs sync in member1, proves the printed Deployment is accepted
// (server dry run) and scheduled on kwok, runs the Deployment's own command as the
// generated ServiceAccounts (their tokens, no admin certificate) through the seed scenario, a
// conflict, an unexport and a member outage, then takes each verb of each generated rule away in
// turn and shows a step that fails with a forbidden message naming the cluster and the verb.
func TestInstallLeastPrivilege(t *testing.T) {
	t.Cleanup(func() { uninstall(t) })
	inst := generate(t)
	checkGeneratedRoles(t)
	checkDeployment(t, inst)
	ns := namespace(t, "e2e-install", members...)
	runScenario(t, inst, ns)
	if t.Failed() {
		return
	}
	for _, p := range rbac.Permissions(rbac.SyncRules) {
		rule := rbac.SyncRules[p.Rule]
		name := rule.Resource + "/" + p.Verb
		t.Run(strings.ReplaceAll(name, "/", "-"), func(t *testing.T) {
			removalCheck(t, inst, ns, p)
		})
	}
}

// generate installs, then reads what --print-manifests prints. Every member, member1 too, is
// given its loopback address: the Deployment's command runs here as local processes.
func generate(t *testing.T) installation {
	t.Helper()
	servers := memberServers(t, members...)
	mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", servers, noWait)
	r := mustMCS(t, "sync", "--print-manifests", "--contexts", allMembers, "--context", "member1", servers)
	inst := installation{manifests: r.stdout, objects: decodeAll(t, r.stdout)}
	dir := t.TempDir()
	var files []string
	for _, o := range inst.objects {
		switch {
		case o.GetKind() == "Secret" && o.GetName() == install.KubeconfigSecret:
			s := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, s); err != nil {
				t.Fatal(err)
			}
			for _, c := range members {
				kc := s.Data[install.KubeconfigKey(c)]
				if len(kc) == 0 {
					t.Fatalf("the kubeconfig Secret has no %s", install.KubeconfigKey(c))
				}
				f := filepath.Join(dir, install.KubeconfigKey(c))
				if err := os.WriteFile(f, kc, 0o600); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
				checkTokenKubeconfig(t, c, f)
			}
		case o.GetKind() == "Deployment":
			args, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, a := range args[0].(map[string]any)["args"].([]any) {
				inst.args = append(inst.args, a.(string))
			}
		}
	}
	if len(files) == 0 || len(inst.args) == 0 {
		t.Fatalf("no kubeconfig Secret or Deployment in the manifests:\n%s", r.stdout)
	}
	inst.kubeconfig = strings.Join(files, string(os.PathListSeparator))
	return inst
}

func decodeAll(t *testing.T, s string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(s), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("decoding the manifests: %v\n%s", err, s)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// checkTokenKubeconfig: the member's kubeconfig holds a bearer token and nothing else, and the
// apiserver knows it as the generated ServiceAccount.
func checkTokenKubeconfig(t *testing.T, c, file string) {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := raw.AuthInfos[c]
	if u == nil || u.Token == "" || len(u.ClientCertificateData) > 0 || u.ClientCertificate != "" || raw.Contexts[c] == nil {
		t.Fatalf("%s: kubeconfig is not a token for context %q: %+v", c, c, raw)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ssr, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s: who am I with the generated kubeconfig: %v", c, err)
	}
	if got := ssr.Status.UserInfo.Username; got != saUser {
		t.Fatalf("%s: the generated kubeconfig authenticates as %q, want %q", c, got, saUser)
	}
}

// checkGeneratedRoles: every member got exactly pkg/rbac's cluster rules; the Lease member the
// Lease rules, the others none.
func checkGeneratedRoles(t *testing.T) {
	t.Helper()
	for _, c := range members {
		cr, err := clients[c].kube.RbacV1().ClusterRoles().Get(context.Background(), install.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if want := rbac.PolicyRules(rbac.SyncRules, rbac.Cluster); !reflect.DeepEqual(normalize(cr.Rules), normalize(want)) {
			t.Errorf("%s: ClusterRole rules\n%+v\nwant\n%+v", c, cr.Rules, want)
		}
		_, err = clients[c].kube.RbacV1().Roles(install.DefaultNamespace).Get(context.Background(), install.LeaderElection, metav1.GetOptions{})
		if (c == "member1") != (err == nil) {
			t.Errorf("%s: Lease Role present = %v, want only in member1 (the host, a member)", c, err == nil)
		}
	}
}

func normalize(rs []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rs))
	for i, r := range rs {
		if len(r.ResourceNames) == 0 {
			r.ResourceNames = nil
		}
		out[i] = r
	}
	return out
}

// checkDeployment: the apiserver accepts the printed manifests (server dry run), and the two
// replicas install applied are scheduled: kwok reports them Running without running anything.
func checkDeployment(t *testing.T, inst installation) {
	t.Helper()
	cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--context", "member1", "apply", "--server-side", "--dry-run=server", "-f", "-")
	cmd.Stdin = strings.NewReader(inst.manifests)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "deployment.apps/kubectl-mcs-sync serverside-applied (server dry run)") {
		t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
	}
	waitFor(t, "two scheduled, running replicas", func() bool {
		pods, err := clients["member1"].kube.CoreV1().Pods(install.DefaultNamespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + install.Name})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == 2
	})
	d, err := clients["member1"].kube.AppsV1().Deployments(install.DefaultNamespace).Get(context.Background(), install.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc := d.Spec.Template.Spec.Containers[0].SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext as stored: %+v", sc)
	}
	if _, err := clients["member1"].kube.PolicyV1().PodDisruptionBudgets(install.DefaultNamespace).Get(context.Background(), install.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("PodDisruptionBudget: %v", err)
	}
}

// asSA runs the binary with the generated kubeconfigs only.
func asSA(inst installation, env []string, args ...string) result {
	return runBinary(append([]string{"KUBECONFIG=" + inst.kubeconfig}, env...), args...)
}

// startAsSA starts a long-running sync with the generated kubeconfigs.
func startAsSA(t *testing.T, inst installation, env []string, args ...string) *watcher {
	t.Helper()
	return startBinary(t, append([]string{"KUBECTL_MCS_CONTEXTS=", "KUBECONFIG=" + inst.kubeconfig}, env...), args...)
}

// deploymentArgs are the Deployment's own arguments, with loopback ports of our own.
func deploymentArgs(t *testing.T, inst installation) []string {
	var out []string
	for _, a := range inst.args {
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + freePort(t)
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + freePort(t)
		}
		out = append(out, a)
	}
	return out
}

// runScenario: two replicas of the Deployment's command, as the ServiceAccounts.
func runScenario(t *testing.T, inst installation, ns string) {
	args := deploymentArgs(t, inst)
	replicas := []*watcher{startAsSA(t, inst, nil, args...), startAsSA(t, inst, nil, deploymentArgs(t, inst)...)}
	waitFor(t, "a leader", func() bool { return leaseHolder(t, "member1", install.DefaultNamespace) != "" })

	// Seed: serve in member1, exposed, imported everywhere.
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", allMembers)
	want := podIPs(t, "member1", ns, "serve")
	for _, c := range []string{"member2", "member3"} {
		waitFor(t, c+" imports serve", func() bool {
			return strings.Join(importedIPs(t, c, ns, "serve", "member1"), ",") == strings.Join(want, ",") &&
				get(t, c, siGVR("v1beta1"), ns, "serve") != nil
		})
	}
	waitFor(t, "serve's export Ready", func() bool { return conditions(t, "member1", ns, "serve")["Ready"] == "True/Exported" })

	// Conflict: two exporters of web with different ports; an Event says so.
	service(t, "member2", ns, "web")
	service(t, "member3", ns, "web", func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 })
	userExport(t, "member2", ns, "web")
	time.Sleep(1100 * time.Millisecond)
	userExport(t, "member3", ns, "web")
	waitFor(t, "web's PortConflict on both exports", func() bool {
		return conditions(t, "member2", ns, "web")["Conflict"] == "True/PortConflict" && conditions(t, "member3", ns, "web")["Conflict"] == "True/PortConflict"
	})
	waitFor(t, "a ConflictDetected Event in member3", func() bool {
		evs, err := clients["member3"].kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if e.Reason == "ConflictDetected" && e.InvolvedObject.Name == "web" {
				return true
			}
		}
		return false
	})

	// Outage: member3 stops; what it exported stays; a new export is imported meanwhile and in
	// member3 once it is back.
	for _, w := range replicas {
		if strings.Contains(w.out.String(), "forbidden") {
			t.Fatalf("a replica was refused something with every generated rule in place:\n%s", w.out.String())
		}
	}
	before := []int{len(replicas[0].out.String()), len(replicas[1].out.String())}
	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	service(t, "member1", ns, "api", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "serve"} })
	userExport(t, "member1", ns, "api")
	waitFor(t, "api imported in member2 during the outage", func() bool { return len(importedIPs(t, "member2", ns, "api", "member1")) == 2 })
	if si := get(t, "member1", siGVR("v1beta1"), ns, "web"); si == nil {
		t.Fatal("web's import went from member1 while member3, an exporter, was down")
	}
	testbed(t, "start", "member3")
	restarted = true
	waitFor(t, "api imported in member3 after the outage", func() bool { return len(importedIPs(t, "member3", ns, "api", "member1")) == 2 })

	// Unexport: serve's import, derived Service and slices leave every member.
	mustMCS(t, "unexpose", "serve", "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		waitFor(t, c+" drops serve's import", func() bool {
			_, err := clients[c].kube.CoreV1().Services(ns).Get(context.Background(), "derived-serve", metav1.GetOptions{})
			return get(t, c, siGVR("v1beta1"), ns, "serve") == nil && apierrors.IsNotFound(err) && len(importedIPs(t, c, ns, "serve", "")) == 0
		})
	}
	// A restarted apiserver refuses requests until its RBAC cache is loaded ("clusterrole ... not
	// found" for every role, system ones included): member3 may say forbidden meanwhile.
	for i, w := range replicas {
		for _, line := range strings.Split(w.out.String()[before[i]:], "\n") {
			// The cluster is a structured key (cluster="member3") or inside an error (cluster \"member3\").
			if strings.Contains(line, "forbidden") && !strings.Contains(strings.ReplaceAll(line, `\"`, `"`), `cluster "member3"`) &&
				!strings.Contains(line, `cluster="member3"`) {
				t.Errorf("a replica was refused something with every generated rule in place: %s", line)
			}
		}
		w.kill()
	}
}

// setRules replaces the generated roles' rules (every member's ClusterRole, member1's Lease
// Role) and waits until the apiserver's authorizer answers for p as wanted.
func setRules(t *testing.T, rules []rbac.Rule, p rbac.Permission, ns string, allowed bool) {
	t.Helper()
	for _, c := range members {
		cr, err := clients[c].kube.RbacV1().ClusterRoles().Get(context.Background(), install.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cr.Rules = rbac.PolicyRules(rules, rbac.Cluster)
		if _, err := clients[c].kube.RbacV1().ClusterRoles().Update(context.Background(), cr, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	role, err := clients["member1"].kube.RbacV1().Roles(install.DefaultNamespace).Get(context.Background(), install.LeaderElection, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = rbac.PolicyRules(rules, rbac.LeaseNamespace)
	if _, err := clients["member1"].kube.RbacV1().Roles(install.DefaultNamespace).Update(context.Background(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rule := rbac.SyncRules[p.Rule]
	resource, sub, _ := strings.Cut(rule.Resource, "/")
	attrs := &authorizationv1.ResourceAttributes{Verb: p.Verb, Group: rule.Group, Resource: resource, Subresource: sub, Namespace: ns}
	check := []string{"member1"}
	if rule.Scope == rbac.LeaseNamespace {
		attrs.Namespace = install.DefaultNamespace
	} else {
		check = members
	}
	if len(rule.ResourceNames) > 0 {
		attrs.Name = rule.ResourceNames[0]
	}
	for _, c := range check {
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			sar, err := clients[c].kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: saUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + install.DefaultNamespace, "system:authenticated"},
				ResourceAttributes: attrs}}, metav1.CreateOptions{})
			return err == nil && sar.Status.Allowed == allowed, nil
		})
		if err != nil {
			t.Fatalf("%s: %s %s never became allowed=%v", c, p.Verb, rule.Resource, allowed)
		}
	}
}

// removalCheck takes one verb away, runs the cheapest step that needs it, expects a forbidden
// message naming a cluster and the verb, and puts the verb back (the next sync then succeeds).
func removalCheck(t *testing.T, inst installation, ns string, p rbac.Permission) {
	rule := rbac.SyncRules[p.Rule]
	name := fmt.Sprintf("p%d-%s", p.Rule, p.Verb)
	prepare, step := stepFor(t, inst, ns, name, rule, p.Verb)
	if prepare != nil {
		prepare()
	}
	setRules(t, rbac.Without(rbac.SyncRules, p), p, ns, false)
	restored := false
	t.Cleanup(func() {
		if !restored {
			setRules(t, rbac.SyncRules, p, ns, true)
		}
	})
	out := step()
	want := regexp.MustCompile(`cannot ` + p.Verb + ` resource "` + regexp.QuoteMeta(rule.Resource) + `"`)
	cluster := regexp.MustCompile(`cluster[ =]"member[123]"`)
	found := ""
	for _, line := range strings.Split(strings.ReplaceAll(out, `\"`, `"`), "\n") {
		if strings.Contains(line, "forbidden") && want.MatchString(line) && cluster.MatchString(line) {
			found = line
			break
		}
	}
	if found == "" {
		t.Fatalf("without %s on %s no step said so (want a line with forbidden, %q and the cluster):\n%s", p.Verb, rule.Resource, want, out)
	}
	t.Logf("without %s %s: %s", p.Verb, rule.Resource, found)
	setRules(t, rbac.SyncRules, p, ns, true)
	restored = true
	if rule.Scope == rbac.Cluster && p.Verb != "list" && p.Verb != "watch" {
		if r := asSA(inst, nil, "sync", "-n", ns, "--contexts", allMembers); r.code != 0 || strings.Contains(r.stderr, "forbidden") {
			t.Fatalf("sync with the rule restored: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
}

// oneShot is a sync of the test namespace as the ServiceAccounts; its whole output.
func oneShot(inst installation, ns string) func() string {
	return func() string {
		r := asSA(inst, nil, "sync", "-n", ns, "--contexts", allMembers)
		return r.stdout + r.stderr
	}
}

// stepFor picks, for one verb of one rule, what to prepare with every rule in place and the step
// that needs the verb.
func stepFor(t *testing.T, inst installation, ns, name string, rule rbac.Rule, verb string) (prepare func(), step func() string) {
	syncOK := func() {
		if r := asSA(inst, nil, "sync", "-n", ns, "--contexts", allMembers); r.code != 0 {
			t.Fatalf("sync before the removal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	exported := func(c string, mutate ...func(*corev1.Service)) {
		service(t, c, ns, name, append([]func(*corev1.Service){func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "serve"} }}, mutate...)...)
		userExport(t, c, ns, name)
	}
	watchFor := func(env []string, extra ...string) func() string {
		return func() string {
			w := startAsSA(t, inst, env, append([]string{"sync", "--watch", "-n", ns, "--contexts", allMembers}, extra...)...)
			_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
				return strings.Contains(w.out.String(), "cannot "+verb+" resource"), nil
			})
			w.kill()
			return w.out.String()
		}
	}
	leaderElect := []string{"--leader-elect", "--leader-elect-context=member1", "--leader-elect-namespace=" + install.DefaultNamespace}
	switch {
	case verb == "list":
		// Informers list with a streaming watch where the apiserver offers it (v1.36 does);
		// an apiserver without streaming lists gets a LIST, which this client setting forces.
		return nil, watchFor([]string{"KUBE_FEATURE_WatchListClient=false"})
	case verb == "watch":
		return nil, watchFor(nil)
	case rule.Resource == "leases" && verb == "create":
		return func() {
			err := clients["member1"].kube.CoordinationV1().Leases(install.DefaultNamespace).Delete(context.Background(), rbac.LeaseName, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}, watchFor(nil, leaderElect...)
	case rule.Resource == "leases" && verb == "update":
		// An expired Lease of a replica long gone: taking it is an update.
		return func() { expiredLease(t) }, watchFor(nil, leaderElect...)
	case rule.Resource == "leases":
		return nil, watchFor(nil, leaderElect...)
	case rule.Resource == "events":
		// A new conflict: member1 and member2 export name with different ports.
		return func() {
			exported("member1")
			exported("member2", func(s *corev1.Service) { s.Spec.Ports[0].Port = 82 })
		}, oneShot(inst, ns)
	case rule.Resource == "clusterproperties": // every command reads the member's ID at connect
		return nil, oneShot(inst, ns)
	case verb == "create" || strings.HasSuffix(rule.Resource, "/status") || rule.Resource == "customresourcedefinitions":
		return func() { exported("member1") }, oneShot(inst, ns)
	case verb == "patch" || verb == "get":
		// Ports and endpoints change: the import and derived Service are updated, the copied
		// slices too (the source slice is updated in place when only its endpoints change).
		// get: the ownership hand-over before an apply reads the object when the entries of
		// ours are more than the create's alone (here an update somebody made under our field
		// manager's name); the create's alone it hands over in place.
		return func() {
				deployment(t, "member1", ns, name, 1)
				service(t, "member1", ns, name)
				userExport(t, "member1", ns, name)
				syncOK()
				if verb == "get" {
					// Our objects applied once (a port change), then annotated under our name.
					if out, err := runKubectl("member1", "-n", ns, "patch", "service", name, "--type=json", `-p=[{"op":"replace","path":"/spec/ports/0/port","value":82}]`); err != nil {
						t.Fatalf("%v: %s", err, out)
					}
					syncOK()
					kind, obj := "serviceimport", name
					if rule.Resource == "services" {
						kind, obj = "service", "derived-"+name
					}
					if out, err := runKubectl("member1", "-n", ns, "annotate", kind, obj, "touched=yes", "--field-manager="+names.FieldManager); err != nil {
						t.Fatalf("%v: %s", err, out)
					}
				}
			}, func() string {
				if out, err := runKubectl("member1", "-n", ns, "patch", "service", name, "--type=json", `-p=[{"op":"replace","path":"/spec/ports/0/port","value":81}]`); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				if out, err := runKubectl("member1", "-n", ns, "scale", "deployment", name, "--replicas=2"); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				waitFor(t, "two endpoints of "+name, func() bool { return len(sourceIPs(t, "member1", ns, name)) == 2 })
				return oneShot(inst, ns)()
			}
	case verb == "delete" && rule.Resource == "serviceimports": // an unexport
		return func() { exported("member1"); syncOK() }, func() string {
			if err := clients["member1"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return oneShot(inst, ns)()
		}
	case verb == "delete" && rule.Resource == "services": // the exported Service turns headless, the derived one is replaced
		return func() { exported("member1"); syncOK() }, func() string {
			if err := clients["member1"].kube.CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			service(t, "member1", ns, name, func(s *corev1.Service) {
				s.Spec.Selector = map[string]string{"app": "serve"}
				s.Spec.ClusterIP = corev1.ClusterIPNone
			})
			return oneShot(inst, ns)()
		}
	case verb == "delete" && rule.Resource == "endpointslices": // one of two exporters stops exporting
		return func() {
				deployment(t, "member2", ns, name, 1)
				exported("member1")
				service(t, "member2", ns, name)
				userExport(t, "member2", ns, name)
				syncOK()
				waitFor(t, "member2's endpoints of "+name+" in member3", func() bool { return len(importedIPs(t, "member3", ns, name, "member2")) == 1 })
			}, func() string {
				if err := clients["member2"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				return oneShot(inst, ns)()
			}
	}
	t.Fatalf("no step needs %s on %s: add one", verb, rule.Resource)
	return nil, nil
}

func expiredLease(t *testing.T) {
	t.Helper()
	leases := clients["member1"].kube.CoordinationV1().Leases(install.DefaultNamespace)
	long := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	holder, d := "a-replica-long-gone", int32(15)
	spec := coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, AcquireTime: &long, RenewTime: &long}
	l, err := leases.Get(context.Background(), rbac.LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: rbac.LeaseName}, Spec: spec}, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec = spec
		_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// uninstall removes what the test generated, by its labels, from every member.
func uninstall(t *testing.T) {
	for _, c := range members {
		sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubectl-mcs,app.kubernetes.io/name=" + install.Name}
		_ = clients[c].kube.RbacV1().ClusterRoleBindings().DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel)
		_ = clients[c].kube.RbacV1().ClusterRoles().DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel)
		// The admission policy too: a later test compares the members with what they held before.
		_ = clients[c].kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel)
		_ = clients[c].kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel)
		_ = clients[c].kube.CoreV1().Namespaces().Delete(context.Background(), install.DefaultNamespace, metav1.DeleteOptions{})
	}
	for _, c := range members {
		waitFor(t, c+": namespace "+install.DefaultNamespace+" gone", func() bool {
			_, err := clients[c].kube.CoreV1().Namespaces().Get(context.Background(), install.DefaultNamespace, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}
