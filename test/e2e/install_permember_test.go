//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// TestInstallPerMember installs --mode=per-member in member1-3 and asks each member's apiserver
// what the identities it holds may do: the other members' readers only read, the writer is
// confined by the admission policy; a second install changes no resourceVersion, and --print-manifests
// prints what install applied.
func TestInstallPerMember(t *testing.T) {
	uninstallPerMember(t)
	t.Cleanup(func() { uninstallPerMember(t) })
	flags := []string{"--mode=per-member", "--contexts", allMembers, memberServers(t, members...),
		"--image=kubectl-mcs/kubectl-mcs:e2e", "--memory-request=200Mi", "--memory-limit=1Gi"}
	args := append([]string{"install", noWait}, flags...)
	r := mustMCS(t, args...)
	if n := strings.Count(r.stderr, "the pods of every member must reach every other member's apiserver"); n != 1 {
		t.Errorf("the reachability warning %d times, want one line:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stderr, "validatingadmissionpolicies not served") {
		t.Errorf("a v1.36 member said not to serve the policy:\n%s", r.stderr)
	}
	installed := nonEmptyLines(r.stdout)

	for _, c := range members {
		checkPerMemberDeployment(t, c)
		for _, from := range members {
			if from != c {
				checkReader(t, c, install.ReaderName(from))
			}
		}
	}
	checkWriterConfined(t)

	installAgain(t, args, r.stdout)

	printed := mustMCS(t, append([]string{"sync", "--print-manifests"}, flags...)...).stdout
	if objs := decodeAll(t, printed); len(objs) != len(installed) {
		t.Errorf("--print-manifests printed %d objects, install applied %d", len(objs), len(installed))
	}
	for _, c := range members {
		if !strings.Contains(printed, "# cluster: "+c+"\n") {
			t.Errorf("--print-manifests prints nothing for %s", c)
		}
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// checkPerMemberDeployment: c runs sync for itself as its writer, with its projected token; its
// own kubeconfig uses the pod's files, every other member's authenticates as c's reader there.
func checkPerMemberDeployment(t *testing.T, c string) {
	t.Helper()
	ctx := context.Background()
	d, err := clients[c].kube.AppsV1().Deployments(install.DefaultNamespace).Get(ctx, install.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	pod := d.Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ") + " "
	for _, want := range []string{"--contexts=" + allMembers + " ", "--local=" + c + " ", "--leader-elect-context=" + c + " "} {
		if !strings.Contains(args, want) {
			t.Errorf("%s: Deployment args %q lack %q", c, args, want)
		}
	}
	if pod.ServiceAccountName != install.Name || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("%s: pods act as %q, token mounted %v", c, pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	if _, err := clients[c].kube.CoreV1().Secrets(install.DefaultNamespace).Get(ctx, install.TokenSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s: the writer has a token Secret (%v)", c, err)
	}
	s, err := clients[c].kube.CoreV1().Secrets(install.DefaultNamespace).Get(ctx, install.KubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	for _, m := range members {
		kc, err := clientcmd.Load(s.Data[install.KubeconfigKey(m)])
		if err != nil || kc.Contexts[m] == nil {
			t.Fatalf("%s: kubeconfig of %s: %v", c, m, err)
		}
		if m == c {
			if kc.Clusters[m].Server != install.InClusterServer || kc.AuthInfos[m].TokenFile == "" || kc.AuthInfos[m].Token != "" {
				t.Errorf("%s: its own kubeconfig is not the pod's: %+v %+v", c, kc.Clusters[m], kc.AuthInfos[m])
			}
			continue
		}
		cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{CurrentContext: m}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		ssr, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: who am I in %s: %v", c, m, err)
		}
		if got, want := ssr.Status.UserInfo.Username, serviceAccountUser(install.ReaderName(c)); got != want {
			t.Errorf("%s: its kubeconfig of %s authenticates as %q, want %q", c, m, got, want)
		}
	}
}

func serviceAccountUser(name string) string {
	return "system:serviceaccount:" + install.DefaultNamespace + ":" + name
}

// canI is `kubectl auth can-i` in c as user: "yes" or "no".
func canI(t *testing.T, c, user string, args ...string) string {
	t.Helper()
	out, err := runKubectl(c, append([]string{"auth", "can-i", "--as=" + user}, args...)...)
	lines := nonEmptyLines(string(out)) // warnings come first
	answer := ""
	if len(lines) > 0 {
		answer = strings.TrimSpace(lines[len(lines)-1])
	}
	if answer != "yes" && answer != "no" || (answer == "yes") != (err == nil) {
		t.Fatalf("%s: kubectl auth can-i %v: %v\n%s", c, args, err, out)
	}
	return answer
}

// checkReader: in c, reader may list and watch what sync reads, and nothing else.
func checkReader(t *testing.T, c, reader string) {
	t.Helper()
	user := serviceAccountUser(reader)
	read := []string{"services", "endpointslices.discovery.k8s.io", "serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io", "namespaces"}
	for _, res := range read {
		for _, verb := range []string{"list", "watch"} {
			if got := canI(t, c, user, verb, res, "-A"); got != "yes" {
				t.Errorf("%s: %s may not %s %s", c, reader, verb, res)
			}
		}
	}
	for _, res := range []string{"services", "endpointslices.discovery.k8s.io", "serviceimports.multicluster.x-k8s.io", "serviceexports.multicluster.x-k8s.io", "events"} {
		for _, verb := range []string{"create", "patch", "update", "delete"} {
			if got := canI(t, c, user, verb, res, "-n", "default"); got != "no" {
				t.Errorf("%s: %s may %s %s", c, reader, verb, res)
			}
		}
	}
	for _, args := range [][]string{{"get", "secrets", "-A"}, {"list", "secrets", "-A"}, {"get", "secrets", "-n", install.DefaultNamespace},
		{"patch", "serviceexports.multicluster.x-k8s.io", "--subresource=status", "-n", "default"}, {"create", "leases.coordination.k8s.io", "-n", install.DefaultNamespace}} {
		if got := canI(t, c, user, args...); got != "no" {
			t.Errorf("%s: %s may %v", c, reader, args)
		}
	}
}

// kubectlIn runs kubectl in c with stdin.
func kubectlIn(c, stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--context", c}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkWriterConfined: in member2, the writer (RBAC lets it write every Service) is denied what is
// not kubectl-mcs's by the admission policy, with its message, and allowed what sync writes.
func checkWriterConfined(t *testing.T) {
	t.Helper()
	writer := "--as=" + install.Writer(install.DefaultNamespace)
	ns := namespace(t, "e2e-permember", "member2")
	service(t, "member2", ns, "mine")
	denied := func(what, want string, stdin string, args ...string) {
		t.Helper()
		out, err := kubectlIn("member2", stdin, append([]string{"-n", ns, writer}, args...)...)
		if err == nil || !strings.Contains(out, "ValidatingAdmissionPolicy 'kubectl-mcs-sync' with binding 'kubectl-mcs-sync' denied request: "+want) {
			t.Errorf("the writer %s: %v\n%s", what, err, out)
		} else {
			t.Logf("the writer %s: %s", what, strings.TrimSpace(out))
		}
	}
	allowed := func(what, stdin string, args ...string) {
		t.Helper()
		if out, err := kubectlIn("member2", stdin, append([]string{"-n", ns, writer}, args...)...); err != nil {
			t.Errorf("the writer %s: %v\n%s", what, err, out)
		}
	}
	services := "kubectl-mcs sync may only write Services it manages (app.kubernetes.io/managed-by=kubectl-mcs)"
	denied("patches a user's Service", services, "", "patch", "service", "mine", "--type=merge", "-p", `{"spec":{"ports":[{"port":81,"targetPort":8080}]}}`)
	denied("relabels a user's Service as ours", services, "", "label", "service", "mine", "app.kubernetes.io/managed-by=kubectl-mcs")
	denied("server-side applies a user's Service", services,
		"apiVersion: v1\nkind: Service\nmetadata: {name: mine, labels: {app.kubernetes.io/managed-by: kubectl-mcs}}\n",
		"apply", "--server-side", "--force-conflicts", "--field-manager=kubectl-mcs", "-f", "-")
	denied("deletes a user's Service", services, "", "delete", "service", "mine")
	denied("creates a Service under a user's name", "kubectl-mcs sync may only create Services named derived-NAME",
		"apiVersion: v1\nkind: Service\nmetadata: {name: theirs, labels: {app.kubernetes.io/managed-by: kubectl-mcs}}\nspec: {ports: [{port: 80}]}\n", "create", "-f", "-")
	var slice string
	waitFor(t, "the EndpointSlice controller's slice of mine", func() bool {
		l, err := clients["member2"].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=mine"})
		if err == nil && len(l.Items) > 0 {
			slice = l.Items[0].Name
		}
		return slice != ""
	})
	denied("deletes a user's EndpointSlice", "kubectl-mcs sync may only write EndpointSlices it manages (endpointslice.kubernetes.io/managed-by=kubectl-mcs)",
		"", "delete", "endpointslice", slice)
	denied("creates another Lease", "kubectl-mcs sync may only write its Lease kubectl-mcs-system/kubectl-mcs-sync",
		"apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: other}\n", "create", "-f", "-", "-n", install.DefaultNamespace)

	derived := "apiVersion: v1\nkind: Service\nmetadata: {name: derived-x, labels: {app.kubernetes.io/managed-by: kubectl-mcs}}\nspec: {ports: [{port: 80}]}\n"
	allowed("creates derived-x, ours, by server-side apply", derived, "apply", "--server-side", "--field-manager=kubectl-mcs", "-f", "-")
	allowed("server-side applies derived-x again", strings.Replace(derived, "managed-by: kubectl-mcs}", "managed-by: kubectl-mcs, changed: again}", 1),
		"apply", "--server-side", "--field-manager=kubectl-mcs", "-f", "-")
	allowed("creates derived-y, ours", strings.Replace(derived, "derived-x", "derived-y", 1), "create", "-f", "-")
	allowed("deletes derived-x", "", "delete", "service", "derived-x")
	if _, err := clients["member2"].kube.CoreV1().Services(ns).Get(context.Background(), "mine", metav1.GetOptions{}); err != nil {
		t.Errorf("the user's Service: %v", err)
	}
}

// uninstallPerMember removes what install --mode=per-member writes, from every member: what
// carries its labels (roles, bindings, the admission policy) and the namespace.
func uninstallPerMember(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubectl-mcs,app.kubernetes.io/name=" + install.Name}
	for _, c := range members {
		k := clients[c].kube
		_ = k.RbacV1().ClusterRoleBindings().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		_ = k.RbacV1().ClusterRoles().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		_ = k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		_ = k.AdmissionregistrationV1().ValidatingAdmissionPolicies().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		_ = k.CoreV1().Namespaces().Delete(ctx, install.DefaultNamespace, metav1.DeleteOptions{})
	}
	for _, c := range members {
		waitFor(t, c+": namespace "+install.DefaultNamespace+" gone", func() bool {
			_, err := clients[c].kube.CoreV1().Namespaces().Get(ctx, install.DefaultNamespace, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}
