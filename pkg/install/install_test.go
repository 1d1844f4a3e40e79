package install

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

func kinds(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetObjectKind().GroupVersionKind().Kind)
		if !names.IsManaged(o.(metav1.Object).GetLabels()) {
			panic(o.GetObjectKind().GroupVersionKind().Kind + " lacks the managed-by label")
		}
	}
	return out
}

func TestMemberObjects(t *testing.T) {
	plain := MemberObjects(Config{Namespace: "ns"}, DeployedMember{ID: "member2"}, rbac.SyncRules)
	if got := kinds(plain); !slices.Equal(got, []string{"Namespace", "ServiceAccount", "Secret", "ClusterRole", "ClusterRoleBinding"}) {
		t.Fatalf("member objects: %v", got)
	}
	lease := MemberObjects(Config{Namespace: "ns"}, DeployedMember{ID: "member1", Lease: true}, rbac.SyncRules)
	if got := kinds(lease); !slices.Equal(got[5:], []string{"Role", "RoleBinding"}) {
		t.Fatalf("Lease member objects: %v", got)
	}
	token := plain[2].(*corev1.Secret)
	if token.Type != corev1.SecretTypeServiceAccountToken || token.Annotations[corev1.ServiceAccountNameKey] != Name || token.Namespace != "ns" {
		t.Errorf("token Secret: %+v", token)
	}
	cr := plain[3].(*rbacv1.ClusterRole)
	if !reflect.DeepEqual(cr.Rules, rbac.PolicyRules(rbac.SyncRules, rbac.Cluster)) {
		t.Errorf("ClusterRole rules are not pkg/rbac's: %+v", cr.Rules)
	}
	crb := plain[4].(*rbacv1.ClusterRoleBinding)
	if crb.RoleRef.Name != cr.Name || crb.Subjects[0].Name != Name || crb.Subjects[0].Namespace != "ns" {
		t.Errorf("binding: %+v", crb)
	}
	role := lease[5].(*rbacv1.Role)
	if role.Namespace != "ns" || !reflect.DeepEqual(role.Rules, rbac.PolicyRules(rbac.SyncRules, rbac.LeaseNamespace)) {
		t.Errorf("Lease Role: %+v", role)
	}
}

// In host mode the host member gets its Namespace and ServiceAccount from MemberObjects and from
// HostObjects: the same objects, or every install would apply one then the other.
func TestHostMemberObjectsAgree(t *testing.T) {
	c := Config{Namespace: "ns", Image: "img:1", Members: []DeployedMember{{ID: "a", Lease: true}, {ID: "b"}}}
	byName := map[string]runtime.Object{}
	for _, o := range MemberObjects(c, c.Members[0], rbac.SyncRules) {
		u, _ := Unstructured([]runtime.Object{o})
		byName[u[0].GetKind()+"/"+u[0].GetName()] = o
	}
	shared := 0
	for _, o := range HostObjects(c, nil) {
		u, _ := Unstructured([]runtime.Object{o})
		if m, ok := byName[u[0].GetKind()+"/"+u[0].GetName()]; ok {
			shared++
			if !reflect.DeepEqual(m, o) {
				t.Errorf("%s/%s differs:\nmember %+v\nhost   %+v", u[0].GetKind(), u[0].GetName(), m, o)
			}
		}
	}
	if shared != 2 {
		t.Errorf("%d objects shared, want the Namespace and the ServiceAccount", shared)
	}
}

func TestDeployment(t *testing.T) {
	c := Config{Namespace: "ns", Image: "img:1", Members: []DeployedMember{{ID: "a"}, {ID: "b", Lease: true}}}
	objs := HostObjects(c, map[string][]byte{"a": []byte("A"), "b": []byte("B")})
	if got := kinds(objs); !slices.Equal(got, []string{"Namespace", "ServiceAccount", "Secret", "Deployment", "PodDisruptionBudget"}) {
		t.Fatalf("host objects: %v", got)
	}
	sa := objs[1].(*corev1.ServiceAccount)
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("the pod's ServiceAccount mounts a token it never uses")
	}
	secret := objs[2].(*corev1.Secret)
	d := objs[3].(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	ctr := pod.Containers[0]
	args := strings.Join(ctr.Args, " ")
	for _, want := range []string{"sync --watch", "--contexts=a,b", "--leader-elect ", "--leader-elect-context=b", "--leader-elect-namespace=ns", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081"} {
		if !strings.Contains(args+" ", want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// KUBECONFIG names exactly the files the Secret's volume holds.
	var kubeconfig string
	for _, e := range ctr.Env {
		if e.Name == "KUBECONFIG" {
			kubeconfig = e.Value
		}
	}
	var mount string
	for _, m := range ctr.VolumeMounts {
		if m.Name == "kubeconfigs" {
			mount = m.MountPath
		}
	}
	var want []string
	for k := range secret.Data {
		want = append(want, filepath.Join(mount, k))
	}
	slices.Sort(want)
	got := strings.Split(kubeconfig, ":")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("KUBECONFIG %v, Secret files %v", got, want)
	}
	if pod.Volumes[0].Secret.SecretName != secret.Name {
		t.Errorf("volume mounts %q, Secret is %q", pod.Volumes[0].Secret.SecretName, secret.Name)
	}
	sc := ctr.SecurityContext
	if !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("securityContext %+v", sc)
	}
	if ctr.ReadinessProbe.HTTPGet.Port.StrVal != "health" || ctr.LivenessProbe.HTTPGet.Path != "/healthz" || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes %+v %+v", ctr.LivenessProbe, ctr.ReadinessProbe)
	}
	if ctr.Resources.Requests.Cpu().IsZero() || ctr.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", ctr.Resources)
	}
	if ctr.Image != "img:1" {
		t.Errorf("image %q", ctr.Image)
	}
	pdb := objs[4].(*policyv1.PodDisruptionBudget)
	if !reflect.DeepEqual(pdb.Spec.Selector, d.Spec.Selector) || d.Spec.Template.Labels[appLabel] != d.Spec.Selector.MatchLabels[appLabel] || pdb.Spec.MinAvailable.IntVal != 1 {
		t.Errorf("PDB %+v, Deployment selector %+v, pod labels %v", pdb.Spec, d.Spec.Selector, d.Spec.Template.Labels)
	}
}

func TestUnstructuredDropsEmptyFields(t *testing.T) {
	us, err := Unstructured([]runtime.Object{Deployment(Config{Namespace: "ns", Image: "i", Members: []DeployedMember{{ID: "a", Lease: true}}})})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := us[0].Object["status"]; ok {
		t.Error("status kept")
	}
	if _, ok := us[0].Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("creationTimestamp kept")
	}
}

func TestTokenKubeconfig(t *testing.T) {
	b, err := TokenKubeconfig("m1", &rest.Config{Host: "https://10.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("user CA")}}, "", []byte("secret CA"), "tok")
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.CurrentContext != "m1" || c.Contexts["m1"].Cluster != "m1" || c.Contexts["m1"].AuthInfo != "m1" {
		t.Fatalf("names: %+v", c)
	}
	if c.AuthInfos["m1"].Token != "tok" || c.Clusters["m1"].Server != "https://10.0.0.1:6443" || string(c.Clusters["m1"].CertificateAuthorityData) != "user CA" {
		t.Errorf("content: %+v %+v", c.AuthInfos["m1"], c.Clusters["m1"])
	}
	// No CA of the user's: the token Secret's.
	b, _ = TokenKubeconfig("m1", &rest.Config{Host: "https://h"}, "", []byte("secret CA"), "tok")
	c, _ = clientcmd.Load(b)
	if string(c.Clusters["m1"].CertificateAuthorityData) != "secret CA" {
		t.Errorf("CA %q", c.Clusters["m1"].CertificateAuthorityData)
	}
}

func TestCurrentKubeconfig(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "client.crt")
	if err := os.WriteFile(cert, []byte("CERT"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := clientcmdapi.Config{
		Clusters:  map[string]*clientcmdapi.Cluster{"kind-a": {Server: "https://a"}, "kind-b": {Server: "https://b"}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {ClientCertificate: cert, ClientKeyData: []byte("KEY")}, "sso": {Exec: &clientcmdapi.ExecConfig{Command: "login-helper"}}},
		Contexts:  map[string]*clientcmdapi.Context{"a": {Cluster: "kind-a", AuthInfo: "admin"}, "b": {Cluster: "kind-b", AuthInfo: "sso"}},
	}
	b, err := CurrentKubeconfig(raw, "a", "member-a", "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := clientcmd.Load(b)
	if len(c.Clusters) != 1 || c.Clusters["member-a"].Server != "https://a" || string(c.AuthInfos["member-a"].ClientCertificateData) != "CERT" || c.AuthInfos["member-a"].ClientCertificate != "" {
		t.Errorf("not minified, renamed and flattened: %+v %+v", c.Clusters, c.AuthInfos["member-a"])
	}
	if why := Portable(raw, "b"); !strings.Contains(why, "login-helper") {
		t.Errorf("Portable(exec) = %q", why)
	}
	if why := Portable(raw, "a"); why != "" {
		t.Errorf("Portable(certificate) = %q", why)
	}
}

func TestLeaseMember(t *testing.T) {
	ms := []*clusterset.Connection{{Ref: clusterset.Ref{Context: "c1", ID: "a"}}, {Ref: clusterset.Ref{Context: "c2", ID: "b"}}}
	for _, tc := range []struct{ host, lease, want string }{
		{"c2", "", "b"},    // the host, a member
		{"other", "", "a"}, // the first member
		{"c2", "c1", "a"},  // as told
	} {
		o := &Options{Host: tc.host, Members: ms, Flags: Flags{LeaseContext: tc.lease}}
		cfg := o.Config()
		if got := cfg.LeaseMember(); got != tc.want {
			t.Errorf("host %s, --leader-elect-context %q: Lease in %q, want %q", tc.host, tc.lease, got, tc.want)
		}
	}
	o := &Options{Host: "c1", Members: ms, Raw: clientcmdapi.Config{Contexts: map[string]*clientcmdapi.Context{"c1": {}}},
		Flags: Flags{Mode: ModeHost, MemberCredentials: CredentialsServiceAccount, Image: "i", LeaseContext: "nope"}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Validate with a Lease context outside the clusterset: %v", err)
	}
	o.LeaseContext, o.MemberCredentials = "", "admin"
	if err := o.Validate(); err == nil {
		t.Error("Validate accepts --member-credentials=admin")
	}
}

// The deployed sync keeps an unreachable member's endpoints unless told otherwise, as sync does.
func TestArgsPassTheUnreachableTimeout(t *testing.T) {
	c := Config{Namespace: DefaultNamespace, Members: []DeployedMember{{ID: "member1", Lease: true}, {ID: "member2"}}}
	for _, a := range Args(c) {
		if strings.HasPrefix(a, "--unreachable-timeout") {
			t.Fatalf("without a timeout: %q in %v", a, Args(c))
		}
	}
	c.UnreachableTimeout = 90 * time.Second
	if args := Args(c); args[len(args)-1] != "--unreachable-timeout=1m30s" {
		t.Fatalf("Args = %v, want --unreachable-timeout=1m30s last", args)
	}
}

// A changed kubeconfig changes the pod template, which rolls the pods; the same kubeconfigs keep
// it, so that a second install changes nothing.
func TestKubeconfigChecksumRollsThePods(t *testing.T) {
	template := func(c Config, kubeconfigs map[string][]byte) corev1.PodTemplateSpec {
		for _, o := range HostObjects(c, kubeconfigs) {
			if d, ok := o.(*appsv1.Deployment); ok {
				return d.Spec.Template
			}
		}
		t.Fatal("no Deployment")
		return corev1.PodTemplateSpec{}
	}
	for _, c := range []Config{
		{Namespace: "ns", Image: "i", Members: []DeployedMember{{ID: "a", Lease: true}, {ID: "b"}}},
		{Namespace: "ns", Image: "i", Members: []DeployedMember{{ID: "a", Lease: true}, {ID: "b"}}, Local: "a"},
	} {
		kcs := map[string][]byte{"a": []byte("server: https://kubernetes.default.svc"), "b": []byte("server: https://10.0.0.2:6443")}
		first := template(c, kcs)
		if first.Annotations[KubeconfigChecksumAnnotation] == "" {
			t.Fatalf("local %q: no checksum: %v", c.Local, first.Annotations)
		}
		if again := template(c, map[string][]byte{"b": kcs["b"], "a": kcs["a"]}); !reflect.DeepEqual(again, first) {
			t.Errorf("local %q: the same kubeconfigs changed the template: %v, then %v", c.Local, first.Annotations, again.Annotations)
		}
		moved := template(c, map[string][]byte{"a": kcs["a"], "b": []byte("server: https://10.0.0.3:6443")})
		if moved.Annotations[KubeconfigChecksumAnnotation] == first.Annotations[KubeconfigChecksumAnnotation] {
			t.Errorf("local %q: another server for b kept the template", c.Local)
		}
		// The bytes of one key moved to another are another Secret.
		if shifted := template(c, map[string][]byte{"a": []byte("server: https://kubernetes.default.svcserver: "), "b": []byte("https://10.0.0.2:6443")}); shifted.Annotations[KubeconfigChecksumAnnotation] == first.Annotations[KubeconfigChecksumAnnotation] {
			t.Errorf("local %q: bytes moved between keys kept the checksum", c.Local)
		}
	}
}
