package karmada

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cluster is a Cluster whose status lists kinds ("gv kind") and, when complete is not "", the
// CompleteAPIEnablements condition with that status.
func cluster(name, complete string, kinds ...string) *unstructured.Unstructured {
	byGV := map[string][]any{}
	var gvs []string
	for _, k := range kinds {
		gv, kind, _ := strings.Cut(k, " ")
		if _, ok := byGV[gv]; !ok {
			gvs = append(gvs, gv)
		}
		byGV[gv] = append(byGV[gv], map[string]any{"name": strings.ToLower(kind) + "s", "kind": kind})
	}
	var ens []any
	for _, gv := range gvs {
		ens = append(ens, map[string]any{"groupVersion": gv, "resources": byGV[gv]})
	}
	status := map[string]any{}
	if len(ens) > 0 {
		status["apiEnablements"] = ens
	}
	if complete != "" {
		status["conditions"] = []any{map[string]any{"type": CompleteAPIEnablements, "status": complete}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": name}, "status": status}}
}

func exportPolicies() []Requirement {
	se := PropagationPolicy("demo", "web-export-policy", []Selector{{"multicluster.x-k8s.io/v1alpha1", "ServiceExport", "web"}}, []string{"kbm"})
	si := PropagationPolicy("demo", "web-import-policy", []Selector{{"multicluster.x-k8s.io/v1alpha1", "ServiceImport", "web"}}, []string{"kbn"})
	wl := PropagationPolicy("demo", "web-workload-policy", []Selector{{"v1", "Service", "web"}, {"apps/v1", "Deployment", "web"}}, []string{"kbm"})
	return append(append(PolicyRequirements(se), PolicyRequirements(si)...), PolicyRequirements(wl)...)
}

func members(cs ...*unstructured.Unstructured) map[string]MemberAPIs {
	out := map[string]MemberAPIs{}
	for _, c := range cs {
		out[c.GetName()] = MemberAPIsOf(c)
	}
	return out
}

var core = []string{"v1 Service", "apps/v1 Deployment", "discovery.k8s.io/v1 EndpointSlice"}

func TestCheckAPIsServed(t *testing.T) {
	kinds := append([]string{"multicluster.x-k8s.io/v1alpha1 ServiceExport", "multicluster.x-k8s.io/v1alpha1 ServiceImport"}, core...)
	// No condition: a Karmada older than the condition, whose list is all it knows.
	got := CheckAPIs(members(cluster("kbm", "True", kinds...), cluster("kbn", "", kinds...)), exportPolicies())
	if len(got) != 0 {
		t.Fatalf("every API served: got %v", got)
	}
}

func TestCheckAPIsMissingMCSAPI(t *testing.T) {
	// kbm serves only v1beta1 (a v1beta1-only CRD); kbn none of multicluster.x-k8s.io.
	kbm := cluster("kbm", "True", append([]string{"multicluster.x-k8s.io/v1beta1 ServiceExport"}, core...)...)
	kbn := cluster("kbn", "", core...)
	got := CheckAPIs(members(kbm, kbn), exportPolicies())
	if len(got) != 2 {
		t.Fatalf("got %d unserved, want 2: %v", len(got), got)
	}
	for i, want := range []Unserved{
		{Cluster: "kbm", GroupVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceExport", For: "PropagationPolicy web-export-policy places ServiceExport web there", Collected: 4},
		{Cluster: "kbn", GroupVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport", For: "PropagationPolicy web-import-policy places ServiceImport web there", Collected: 3},
	} {
		if got[i] != want {
			t.Errorf("unserved[%d] = %+v, want %+v", i, got[i], want)
		}
	}
	msg := got[1].String() + "\n" + strings.Join(Fixes(got), "\n")
	for _, w := range []string{`member cluster "kbn" does not serve multicluster.x-k8s.io/v1alpha1 ServiceImport (PropagationPolicy web-import-policy places ServiceImport web there)`,
		"kubectl mcs init --contexts=kbm,kbn", "ClusterPropagationPolicy"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
}

func TestCheckAPIsNotCollected(t *testing.T) {
	// No apiEnablements at all (a Cluster just joined), or a partial list without the kind:
	// unknown, never a refusal.
	for _, c := range []*unstructured.Unstructured{cluster("kbn", ""), cluster("kbn", "False", core...)} {
		m := members(cluster("kbm", "True", append([]string{"multicluster.x-k8s.io/v1alpha1 ServiceExport"}, core...)...), c)
		got := CheckAPIs(m, exportPolicies())
		if len(got) != 1 || !got[0].Unknown || got[0].Cluster != "kbn" || got[0].Kind != "ServiceImport" {
			t.Fatalf("got %+v, want kbn's ServiceImport unknown", got)
		}
		if s := got[0].String(); !strings.Contains(s, "only once the Cluster lists it") || !strings.Contains(s, `"kbn"`) {
			t.Errorf("message %q", s)
		}
	}
}

func TestCheckAPIsCustomWorkloadAndUnknownCluster(t *testing.T) {
	wl := PropagationPolicy("demo", "web-workload-policy", []Selector{{"v1", "Service", "web"}, {"argoproj.io/v1alpha1", "Rollout", "web"}}, []string{"kbm", "gone"})
	got := CheckAPIs(members(cluster("kbm", "True", core...)), PolicyRequirements(wl))
	// "gone" has no Cluster: not this check's to refuse.
	if len(got) != 1 || got[0].Kind != "Rollout" || !strings.Contains(Fixes(got)[0], "Install the CRDs that serve argoproj.io in kbm") {
		t.Fatalf("got %+v", got)
	}
	if g := got[0].Group(); g != "argoproj.io" {
		t.Errorf("Group() = %q", g)
	}
}

func TestCheckAPIsOncePerClusterAndAPI(t *testing.T) {
	reqs := []Requirement{
		{GroupVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Clusters: []string{"kbm", "kbm"}, For: "MultiClusterService web"},
	}
	got := CheckAPIs(members(cluster("kbm", "True", "v1 Service")), reqs)
	if len(got) != 1 || !strings.Contains(Fixes(got)[0], "Kubernetes v1.21") {
		t.Fatalf("got %+v", got)
	}
}
