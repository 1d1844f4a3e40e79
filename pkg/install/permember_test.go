package install

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// perMember is a per-member install of three members, validated.
func perMember(t *testing.T) *Options {
	t.Helper()
	var ms []*clusterset.Connection
	for _, id := range []string{"m1", "m2", "m3"} {
		ms = append(ms, &clusterset.Connection{Ref: clusterset.Ref{Context: "ctx-" + id, ID: id},
			Config: &rest.Config{Host: "https://" + id + ".example:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte(id + " CA")}}})
	}
	var errOut bytes.Buffer
	o := &Options{Members: ms, ErrOut: &errOut, Flags: Flags{Mode: ModePerMember, MemberCredentials: CredentialsServiceAccount, Image: "img:1",
		MemberServers: []string{"ctx-m2=https://10.0.0.2:6443"}}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPerMemberConfigs(t *testing.T) {
	cfgs := perMember(t).configs()
	if len(cfgs) != 3 {
		t.Fatalf("%d configs, want one per member", len(cfgs))
	}
	for i, c := range cfgs {
		if want := []string{"m1", "m2", "m3"}[i]; c.Local != want || c.LeaseMember() != want {
			t.Errorf("config %d: Local %q, Lease in %q, want both %q", i, c.Local, c.LeaseMember(), want)
		}
		args := strings.Join(Args(c), " ") + " "
		for _, want := range []string{"sync --watch ", "--contexts=m1,m2,m3 ", "--local=" + c.Local + " ", "--leader-elect ",
			"--leader-elect-context=" + c.Local + " ", "--leader-elect-namespace=" + DefaultNamespace + " "} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: args %q lack %q", c.Local, args, want)
			}
		}
	}
	if args := strings.Join(Args(perMember(t).Config()), " "); strings.Contains(args, "--local") {
		t.Errorf("host mode passes --local: %s", args)
	}
}

// In member m2: the writer without a token Secret, its Lease role, the reader role and one
// reader identity (ServiceAccount, token, binding) for each other member.
func TestPerMemberMemberObjects(t *testing.T) {
	c := perMember(t).configs()[1]
	objs := MemberObjects(c, c.Members[1], rbac.SyncRules)
	want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ClusterRole",
		"ServiceAccount", "Secret", "ClusterRoleBinding", "ServiceAccount", "Secret", "ClusterRoleBinding"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Fatalf("m2's objects: %v, want %v", got, want)
	}
	for _, o := range objs {
		if s, ok := o.(*corev1.Secret); ok && s.Annotations[corev1.ServiceAccountNameKey] == Name {
			t.Errorf("a token Secret for the writer: %s", s.Name)
		}
	}
	reader := objs[6].(*rbacv1.ClusterRole)
	if reader.Name != ReaderRole || !reflect.DeepEqual(reader.Rules, rbac.PolicyRules(rbac.ReaderRules(), rbac.Cluster)) {
		t.Errorf("reader ClusterRole: %+v", reader)
	}
	for i, id := range []string{"m1", "m3"} {
		sa, tok, crb := objs[7+3*i].(*corev1.ServiceAccount), objs[8+3*i].(*corev1.Secret), objs[9+3*i].(*rbacv1.ClusterRoleBinding)
		if sa.Name != "kubectl-mcs-reader-"+id || sa.Namespace != DefaultNamespace {
			t.Errorf("reader of %s: %s/%s", id, sa.Namespace, sa.Name)
		}
		if tok.Name != ReaderTokenSecret(id) || tok.Type != corev1.SecretTypeServiceAccountToken || tok.Annotations[corev1.ServiceAccountNameKey] != sa.Name {
			t.Errorf("reader token of %s: %+v", id, tok.ObjectMeta)
		}
		if crb.Name != sa.Name || crb.RoleRef.Name != ReaderRole || crb.Subjects[0].Name != sa.Name || crb.Subjects[0].Namespace != DefaultNamespace {
			t.Errorf("reader binding of %s: %+v", id, crb)
		}
	}
}

// Per member the Deployment runs in its member as the writer, with its projected token, and
// the Namespace and ServiceAccount come with MemberObjects.
func TestPerMemberHostObjects(t *testing.T) {
	c := perMember(t).configs()[0]
	objs := HostObjects(c, map[string][]byte{"m1": []byte("1"), "m2": []byte("2"), "m3": []byte("3")})
	if got := kinds(objs); !slices.Equal(got, []string{"Secret", "Deployment", "PodDisruptionBudget"}) {
		t.Fatalf("objects: %v", got)
	}
	pod := objs[1].(*appsv1.Deployment).Spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken || pod.ServiceAccountName != Name {
		t.Errorf("pod acts as %q, token mounted %v", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	if host := HostObjects(Config{Namespace: "ns", Members: c.Members}, nil); *host[3].(*appsv1.Deployment).Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("host mode mounts the pod's token")
	}
}

func TestInClusterKubeconfig(t *testing.T) {
	b, err := InClusterKubeconfig("m1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	cl, u := c.Clusters["m1"], c.AuthInfos["m1"]
	if c.CurrentContext != "m1" || cl.Server != "https://kubernetes.default.svc" || cl.CertificateAuthority != "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" ||
		u.TokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" || u.Token != "" || len(cl.CertificateAuthorityData) > 0 {
		t.Errorf("in-cluster kubeconfig: %+v %+v", cl, u)
	}
}

// m2's pods: m2 itself in-cluster, m1 and m3 with the token of m2's reader there, each at the
// address its pods use.
func TestPerMemberKubeconfigs(t *testing.T) {
	o := perMember(t)
	asked := map[string]string{}
	kcs, err := o.kubeconfigs(context.Background(), func(_ context.Context, m *clusterset.Connection, secret string) (string, []byte, error) {
		asked[m.ID] = secret
		return "token-of-" + secret + "-in-" + m.ID, nil, nil
	}, "m2")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"m1": "kubectl-mcs-reader-m2-token", "m3": "kubectl-mcs-reader-m2-token"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("tokens read: %v, want %v", asked, want)
	}
	for id, server := range map[string]string{"m1": "https://m1.example:6443", "m2": InClusterServer, "m3": "https://m3.example:6443"} {
		c, err := clientcmd.Load(kcs[id])
		if err != nil {
			t.Fatal(err)
		}
		if c.Clusters[id].Server != server {
			t.Errorf("%s at %s, want %s", id, c.Clusters[id].Server, server)
		}
		if tok := c.AuthInfos[id].Token; (id == "m2") != (tok == "") || id != "m2" && tok != "token-of-kubectl-mcs-reader-m2-token-in-"+id {
			t.Errorf("%s: token %q", id, tok)
		}
	}
	// --member-server names the address the others use for m2.
	kcs, _ = o.kubeconfigs(context.Background(), func(context.Context, *clusterset.Connection, string) (string, []byte, error) { return "t", nil, nil }, "m1")
	if c, _ := clientcmd.Load(kcs["m2"]); c.Clusters["m2"].Server != "https://10.0.0.2:6443" {
		t.Errorf("m2 for m1's pods at %s", c.Clusters["m2"].Server)
	}
	if w := o.reachWarning(); !strings.Contains(w, "the pods of every member must reach every other member's apiserver") || !strings.Contains(w, "m2 at https://10.0.0.2:6443") {
		t.Errorf("warning %q", w)
	}
}

func TestReaderName(t *testing.T) {
	long := strings.Repeat("a", 63)
	seen := map[string]string{}
	for _, id := range []string{"member1", "eu.west.prod", "eu-west-prod", long, long + "b", "UPPER"} {
		n := ReaderName(id)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("ReaderName(%q) = %q: %v", id, n, errs)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q share %q", id, other, n)
		}
		seen[n] = id
	}
	if ReaderName("member1") != "kubectl-mcs-reader-member1" {
		t.Errorf("ReaderName(member1) = %q", ReaderName("member1"))
	}
}

// The policy's CEL, by structure: each rule guards its resource, reads labels that may be absent
// as the apiserver allows, never reads object on DELETE nor oldObject on CREATE unguarded, and
// its quotes and parentheses balance; the binding denies.
func TestPolicy(t *testing.T) {
	objs := PolicyObjects(DefaultNamespace)
	p, b := objs[0].(*admissionregistrationv1.ValidatingAdmissionPolicy), objs[1].(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	if b.Spec.PolicyName != p.Name || !slices.Equal(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %+v", b.Spec)
	}
	if mc := p.Spec.MatchConditions; len(mc) != 1 || mc[0].Expression != "request.userInfo.username == 'system:serviceaccount:kubectl-mcs-system:kubectl-mcs-sync'" {
		t.Errorf("matchConditions %+v", mc)
	}
	var resources []string
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		resources = append(resources, r.Resources...)
		if !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{"CREATE", "UPDATE", "DELETE"}) {
			t.Errorf("operations %v", r.Operations)
		}
	}
	if !slices.Equal(resources, []string{"services", "endpointslices", "leases"}) {
		t.Errorf("matched %v", resources)
	}
	for _, v := range p.Spec.Validations {
		e := v.Expression
		if strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "'")%2 != 0 {
			t.Errorf("unbalanced: %s", e)
		}
		if !strings.HasPrefix(e, "request.resource.resource != '") || !strings.HasPrefix(v.Message, "kubectl-mcs sync may only ") {
			t.Errorf("rule %q (%q) is not guarded by its resource, or its message says no why", e, v.Message)
		}
		if strings.Contains(e, "object.metadata.labels") {
			t.Errorf("reads a label that may be absent without ?: %s", e)
		}
	}
	services := p.Spec.Validations[0]
	for _, want := range []string{"(request.operation == 'DELETE' || object.metadata.?labels['" + names.ManagedByLabel + "'].orValue('') == 'kubectl-mcs')",
		"(request.operation == 'CREATE' || oldObject.metadata.?labels['" + names.ManagedByLabel + "'].orValue('') == 'kubectl-mcs')"} {
		if !strings.Contains(services.Expression, want) {
			t.Errorf("services rule %q lacks %q", services.Expression, want)
		}
	}
	if !strings.Contains(p.Spec.Validations[1].Expression, "object.metadata.name.startsWith('derived-')") ||
		!strings.Contains(p.Spec.Validations[2].Expression, "'"+names.EndpointSliceManagedByLabel+"'") {
		t.Errorf("name or slice rule: %+v", p.Spec.Validations[1:3])
	}
	if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Error("a policy that cannot be evaluated lets the write through")
	}
}

// A member that does not serve the policy gets none, and a warning naming it.
func TestPolicyOnlyWhereServed(t *testing.T) {
	o := perMember(t)
	for i, m := range o.Members {
		d := &fakediscovery.FakeDiscovery{Fake: &fake.NewClientset().Fake}
		if i != 1 {
			d.Resources = []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1",
				APIResources: []metav1.APIResource{{Name: "validatingadmissionpolicies"}, {Name: "validatingadmissionpolicybindings"}}}}
		}
		m.Discovery = d
	}
	cfgs := o.configs()
	for i, m := range o.Members {
		objs, err := o.memberObjects(cfgs, i)
		if err != nil {
			t.Fatal(err)
		}
		got := kinds(objs)
		if has := slices.Contains(got, "ValidatingAdmissionPolicy") && slices.Contains(got, "ValidatingAdmissionPolicyBinding"); has != (i != 1) {
			t.Errorf("%s: %v", m.ID, got)
		}
	}
	if w := o.ErrOut.(*bytes.Buffer).String(); strings.Count(w, "Warning: ") != 1 || !strings.Contains(w, `cluster "m2": admissionregistration.k8s.io/v1 validatingadmissionpolicies not served`) {
		t.Errorf("warnings: %q", w)
	}
}
