package uninstall

import (
	"slices"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

func keyOf(t *testing.T, o runtime.Object) string {
	t.Helper()
	m, err := apimeta.Accessor(o)
	if err != nil {
		t.Fatal(err)
	}
	return o.GetObjectKind().GroupVersionKind().Kind + " " + m.GetNamespace() + "/" + m.GetName()
}

// Every object install can write in a member, whatever the mode, the host, the Lease member and
// the credentials, is among what uninstall deletes there (but the shared Namespace, which goes
// last by a rule of its own).
func TestInstalledHoldsEverythingInstallWrites(t *testing.T) {
	ids := []string{"member1", "member2", "member3"}
	want := map[string]bool{}
	for _, lease := range ids {
		members := make([]install.DeployedMember, len(ids))
		for i, id := range ids {
			members[i] = install.DeployedMember{ID: id, Lease: id == lease}
		}
		host := install.Config{Namespace: install.DefaultNamespace, Members: members, Image: "x"}
		for _, m := range members {
			local := host
			local.Local = m.ID
			var objs []runtime.Object
			objs = append(objs, install.MemberObjects(host, m, rbac.SyncRules)...)
			objs = append(objs, install.MemberObjects(local, m, rbac.SyncRules)...)
			objs = append(objs, install.HostObjects(local, map[string][]byte{"a": []byte("b")})...)
			objs = append(objs, install.PolicyObjects(install.DefaultNamespace)...)
			if m.ID == "member1" {
				objs = append(objs, install.HostObjects(host, nil)...)
			}
			for _, o := range objs {
				want[m.ID+" "+keyOf(t, o)] = true
			}
		}
	}
	got := map[string]bool{}
	for _, id := range ids {
		for _, o := range install.Installed(ids, id) {
			got[id+" "+keyOf(t, o)] = true
		}
	}
	for k := range want {
		if !got[k] && !strings.Contains(k, " Namespace ") {
			t.Errorf("install writes %s, uninstall does not delete it", k)
		}
	}
	for k := range got {
		if strings.Contains(k, " Namespace ") {
			t.Errorf("Installed holds %s: the namespace goes last, by its own rule", k)
		}
	}
	dns := map[string]bool{}
	for _, o := range install.DNSServerInstalled() {
		dns[keyOf(t, o)] = true
	}
	for _, o := range install.DNSServerObjects(install.DNSServerConfig{Image: "x"}) {
		if k := keyOf(t, o); !dns[k] && !strings.HasPrefix(k, "Namespace ") {
			t.Errorf("dns-server --print-manifests writes %s, uninstall does not delete it", k)
		}
	}
}

// What runs goes before its rights, the admission policy last; every kind has its place.
func TestOrdered(t *testing.T) {
	ids := []string{"member1", "member2"}
	for _, objs := range [][]runtime.Object{install.Installed(ids, "member1"), install.DNSServerInstalled()} {
		us, err := Ordered(objs)
		if err != nil {
			t.Fatal(err)
		}
		kinds := make([]string, len(us))
		for i, u := range us {
			kinds[i] = u.GetKind()
		}
		if kinds[0] != "Deployment" {
			t.Errorf("first deleted: %s, want the Deployment: %v", kinds[0], kinds)
		}
		last := func(k string) int {
			n := -1
			for i, x := range kinds {
				if x == k {
					n = i
				}
			}
			return n
		}
		before := func(a, b string) {
			if ia, ib := last(a), slices.Index(kinds, b); ia >= 0 && ib >= 0 && ia > ib {
				t.Errorf("%s not all before %s: %v", a, b, kinds)
			}
		}
		before("Deployment", "ServiceAccount")
		before("Secret", "ServiceAccount")
		before("ServiceAccount", "ClusterRoleBinding")
		before("ClusterRoleBinding", "ClusterRole")
		before("ClusterRole", "ValidatingAdmissionPolicyBinding")
		before("ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy")
	}
	if _, err := Ordered([]runtime.Object{&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x"}}}}); err == nil {
		t.Error("a kind without a place was ordered")
	}
}

func TestSteps(t *testing.T) {
	for _, c := range []struct {
		sync, crds bool
		want       []Step
	}{
		{false, false, []Step{StepCorefile, StepDNSServer, StepSync, StepNamespace}},
		{true, false, []Step{StepCorefile, StepDNSServer, StepSync, StepSyncObjects, StepNamespace}},
		{false, true, []Step{StepCorefile, StepDNSServer, StepSync, StepSyncObjects, StepCRDs, StepNamespace}},
	} {
		if got := Steps(c.sync, c.crds); !slices.Equal(got, c.want) {
			t.Errorf("Steps(%v, %v) = %v, want %v", c.sync, c.crds, got, c.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	if err := Refusal([]Exports{{Cluster: "member1"}, {Cluster: "member2"}}); err != nil {
		t.Errorf("no export, refused: %v", err)
	}
	err := Refusal([]Exports{{Cluster: "member1", Names: []string{"demo/b", "demo/a"}}, {Cluster: "member2"}, {Cluster: "member3", Names: []string{"x/y"}}})
	if err == nil {
		t.Fatal("exports, not refused")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{`  cluster "member1": demo/a, demo/b`, `  cluster "member3": x/y`}
	if !slices.Equal(lines[1:], want) {
		t.Errorf("refusal lines:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(lines[0], "3 ServiceExport(s)") || !strings.Contains(lines[0], "--force") || !strings.Contains(lines[0], "nothing was changed") {
		t.Errorf("refusal head: %s", lines[0])
	}
}

func obj(name string, labels map[string]string, owned bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetName(name)
	u.SetLabels(labels)
	if owned {
		u.SetOwnerReferences([]metav1.OwnerReference{{Name: "rs", Kind: "ReplicaSet", APIVersion: "apps/v1", UID: "u"}})
	}
	return u
}

func TestForeign(t *testing.T) {
	ours := map[string]string{"app.kubernetes.io/managed-by": "kubectl-mcs"}
	for _, c := range []struct {
		resource string
		obj      *unstructured.Unstructured
		want     bool
	}{
		{"configmaps", obj("kube-root-ca.crt", nil, false), false},
		{"serviceaccounts", obj("default", nil, false), false},
		{"leases", obj(rbac.LeaseName, nil, false), false},
		{"events", obj("x.123", nil, false), false},
		{"endpointslices", obj("kubectl-mcs-dns-abc", nil, false), false},
		{"pods", obj("kubectl-mcs-sync-1", nil, true), false},
		{"deployments", obj(install.Name, ours, false), false},
		{"configmaps", obj("mine", nil, false), true},
		{"leases", obj("other", nil, false), true},
		{"deployments", obj("mine", map[string]string{"app.kubernetes.io/managed-by": "helm"}, false), true},
	} {
		if got := Foreign(c.resource, c.obj); got != c.want {
			t.Errorf("Foreign(%s/%s) = %v, want %v", c.resource, c.obj.GetName(), got, c.want)
		}
	}
}

func TestIsDerivedService(t *testing.T) {
	ours := map[string]string{"app.kubernetes.io/managed-by": "kubectl-mcs"}
	if !isDerivedService(obj("derived-serve", ours, false)) {
		t.Error("derived-serve, ours: not derived")
	}
	if isDerivedService(obj("derived-serve", nil, false)) {
		t.Error("a user's derived-serve taken for ours")
	}
	if isDerivedService(obj("kubectl-mcs-dns", ours, false)) {
		t.Error("the DNS server's Service taken for a derived one")
	}
}
