package export

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

func karmadaSpec(mod func(*Spec)) *Spec {
	s := &Spec{Target: Target{Namespace: "demo", Service: "serve", Karmada: true}, API: APIMultiClusterService, Types: []string{karmada.TypeCrossCluster}}
	if mod != nil {
		mod(s)
	}
	return s
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Spec
		want string
	}{
		{"direct", &Spec{Target: Target{Namespace: "demo", Service: "serve"}}, ""},
		{"direct bad name", &Spec{Target: Target{Service: "Serve"}}, `service "Serve": not a valid Service name`},
		{"no service", &Spec{Target: Target{Namespace: "demo"}}, "give a SERVICE, -l SELECTOR or --all"},
		{"selector", &Spec{Target: Target{Namespace: "demo"}, Selector: "tier=backend"}, ""},
		{"all", &Spec{Target: Target{Namespace: "demo"}, All: true}, ""},
		{"name and selector", &Spec{Target: Target{Namespace: "demo", Service: "serve"}, Selector: "tier=backend"}, `service "serve" and -l tier=backend select in two ways`},
		{"name and all", &Spec{Target: Target{Namespace: "demo", Service: "serve"}, All: true}, `service "serve" and --all select in two ways`},
		{"selector and all", &Spec{Target: Target{Namespace: "demo"}, Selector: "a=b", All: true}, "--all and -l/--selector select in two ways"},
		{"bad selector", &Spec{Target: Target{Namespace: "demo"}, Selector: "a in (b"}, `-l "a in (b"`},
		{"selector with karmada", &Spec{Target: Target{Namespace: "demo", Karmada: true}, All: true}, "with --karmada give one SERVICE"},
		{"mcs", karmadaSpec(nil), ""},
		{"bad api", karmadaSpec(func(s *Spec) { s.API = "mcs" }), `--api "mcs": must be multiclusterservice or serviceexport`},
		{"bad provider", karmadaSpec(func(s *Spec) { s.Providers = []string{"Member_1"} }), "--providers"},
		{"labels need a ServiceExport", karmadaSpec(func(s *Spec) { s.Labels = map[string]string{"a": "b"} }), "add --api=serviceexport"},
		{"serviceexport needs consumers", karmadaSpec(func(s *Spec) { s.API, s.Providers = APIServiceExport, []string{"member1"} }), "needs --providers and --consumers"},
		{"serviceexport", karmadaSpec(func(s *Spec) {
			s.API, s.Providers, s.Consumers, s.Labels = APIServiceExport, []string{"member1"}, []string{"member2"}, map[string]string{"a": "b"}
		}), ""},
		{"propagate needs providers", karmadaSpec(func(s *Spec) { s.Propagate = true }), "--propagate needs --providers"},
		{"workload needs propagate", karmadaSpec(func(s *Spec) {
			s.Providers, s.Workload.Kind, s.Workload.Name = []string{"member1"}, "deployment", "serve"
		}), "--workload goes with --propagate"},
		{"bad type", karmadaSpec(func(s *Spec) { s.Types = []string{"NodePort"} }), `"NodePort"`},
		{"duplicate port name", karmadaSpec(func(s *Spec) { s.Ports = []karmada.Port{{Name: "http", Port: 80}, {Name: "http", Port: 81}} }), "unique"},
	} {
		err := tc.s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseWorkload(t *testing.T) {
	if k, n, err := ParseWorkload("deployments.apps/serve"); k != "deployments.apps" || n != "serve" || err != nil {
		t.Errorf("%q %q %v", k, n, err)
	}
	for _, bad := range []string{"serve", "/serve", "deployment/"} {
		if _, _, err := ParseWorkload(bad); err == nil || !strings.Contains(err.Error(), "want KIND/NAME") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

type ref struct{ resource, name string }

func refs(objs []object) []ref {
	var out []ref
	for _, o := range objs {
		out = append(out, ref{o.gvr.Resource, o.obj.GetName()})
	}
	return out
}

var (
	mcs            = ref{"multiclusterservices", "serve"}
	export         = ref{"serviceexports", "serve"}
	exportPolicy   = ref{"propagationpolicies", karmada.PolicyName("serve", "export")}
	importObj      = ref{"serviceimports", "serve"}
	importPolicy   = ref{"propagationpolicies", karmada.PolicyName("serve", "import")}
	workloadPolicy = ref{"propagationpolicies", karmada.PolicyName("serve", "workload")}
)

// What expose writes is always among what unexpose removes, so that unexpose leaves nothing
// behind whatever expose was run with.
func TestKarmadaObjects(t *testing.T) {
	owned := (&Spec{Target: Target{Namespace: "demo", Service: "serve", Karmada: true}}).objects(nil, mcsapi.Schemas{}, nil, true)
	if got, want := refs(owned), []ref{mcs, export, exportPolicy, importObj, importPolicy, workloadPolicy}; !reflect.DeepEqual(got, want) {
		t.Errorf("owned: %v, want %v", got, want)
	}
	for _, o := range owned {
		if o.obj.GetNamespace() != "demo" || !names.IsManaged(o.obj.GetLabels()) {
			t.Errorf("%s: namespace %q labels %v", o.obj.GetName(), o.obj.GetNamespace(), o.obj.GetLabels())
		}
	}

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}}
	workload := &karmada.Selector{APIVersion: "apps/v1", Kind: "Deployment", Name: "serve"}
	for _, tc := range []struct {
		name string
		s    *Spec
		want []ref
	}{
		{"multiclusterservice", karmadaSpec(nil), []ref{mcs}},
		{"multiclusterservice, propagated", karmadaSpec(func(s *Spec) { s.Propagate = true }), []ref{mcs, workloadPolicy}},
		{"serviceexport", karmadaSpec(func(s *Spec) { s.API = APIServiceExport }), []ref{export, exportPolicy, importObj, importPolicy}},
		{"serviceexport, propagated", karmadaSpec(func(s *Spec) { s.API, s.Propagate = APIServiceExport, true }), []ref{export, exportPolicy, importObj, importPolicy, workloadPolicy}},
	} {
		objs := tc.s.objects(svc, mcsapi.Schemas{}, workload, false)
		if got := refs(objs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for _, r := range refs(objs) {
			if !slices.Contains(refs(owned), r) {
				t.Errorf("%s: expose writes %v, which unexpose would not remove", tc.name, r)
			}
		}
	}

	// The ServiceImport follows the Service; the policies place each object where it belongs.
	s := karmadaSpec(func(s *Spec) {
		s.API, s.Propagate, s.Providers, s.Consumers = APIServiceExport, true, []string{"member1"}, []string{"member2"}
	})
	objs := s.objects(svc, mcsapi.Schemas{}, workload, false)
	if typ, _, _ := unstructured.NestedString(objs[2].obj.Object, "spec", "type"); typ != "Headless" {
		t.Errorf("ServiceImport of a headless Service: type %q", typ)
	}
	for i, want := range map[int]string{1: "member1", 3: "member2", 4: "member1"} {
		if got := fmt.Sprint(objs[i].obj.Object["spec"]); !strings.Contains(got, want) {
			t.Errorf("%s places in %s, want %s", objs[i].obj.GetName(), got, want)
		}
	}
	if got := fmt.Sprint(objs[4].obj.Object["spec"]); !strings.Contains(got, "Deployment") || !strings.Contains(got, "kind:Service") {
		t.Errorf("workload policy selects %s", got)
	}
}

func TestToTarget(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
- {name: member1, context: {cluster: c, user: u, namespace: team-a}}
- {name: karmada-apiserver, context: {cluster: c, user: u, namespace: demo}}
current-context: member1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (Target, error) {
		cf := genericclioptions.NewConfigFlags(false)
		cf.KubeConfig = &kubeconfig
		var f TargetFlags
		fs := pflag.NewFlagSet("expose", pflag.ContinueOnError)
		f.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.ToTarget(cf, "serve")
	}
	tg, err := parse("--contexts=member1", "--providers=member1")
	if err != nil || tg.Karmada || tg.Namespace != "team-a" || tg.Service != "serve" || tg.Clusterset.Contexts != "member1" || !reflect.DeepEqual(tg.Providers, []string{"member1"}) {
		t.Errorf("direct: %+v, %v", tg, err)
	}
	// --karmada-context=CTX is --karmada --context=CTX: the namespace is that context's.
	tg, err = parse("--karmada-context=karmada-apiserver")
	if err != nil || !tg.Karmada || tg.Namespace != "demo" || *tg.ConfigFlags.Context != "karmada-apiserver" {
		t.Errorf("--karmada-context: %+v, %v", tg, err)
	}
	if tg.version() != mcsapi.V1alpha1 {
		t.Errorf("Karmada writes %s by default", tg.version())
	}
	if _, err := parse("--mcs-api-version=v2"); err == nil || err.Error() != `--mcs-api-version "v2": must be v1beta1 or v1alpha1` {
		t.Errorf("--mcs-api-version=v2: %v", err)
	}
}

func TestCheckProviders(t *testing.T) {
	ids := []string{"member1", "member2"}
	if err := checkProviders([]string{"member2"}, ids); err != nil {
		t.Error(err)
	}
	if err := checkProviders([]string{"member1", "member9"}, ids); err == nil || err.Error() != `--providers: cluster "member9" is not in the clusterset (member1, member2)` {
		t.Errorf("%v", err)
	}
}
