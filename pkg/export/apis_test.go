package export

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// The objects an export writes say where each API must be served: a provider without the
// mcs-api CRDs refuses the plan, --force turns it into a warning, and a member whose APIs Karmada
// has not collected is a warning either way.
func TestCheckAPIsOfAnExport(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"}}
	core := map[string]bool{"v1 Service": true, "discovery.k8s.io/v1 EndpointSlice": true, "apps/v1 Deployment": true}
	withMCS := map[string]bool{"multicluster.x-k8s.io/v1alpha1 ServiceExport": true, "multicluster.x-k8s.io/v1alpha1 ServiceImport": true}
	for k := range core {
		withMCS[k] = true
	}
	members := map[string]karmada.MemberAPIs{
		"kbm": {Name: "kbm", Kinds: core},
		"kbn": {Name: "kbn", Kinds: withMCS},
		"new": {Name: "new", Kinds: map[string]bool{}, Partial: true},
	}
	spec := func(api string, providers, consumers []string, force bool) *Spec {
		return karmadaSpec(func(s *Spec) {
			s.Service, s.API, s.Propagate, s.Providers, s.Consumers, s.Force = "web", api, true, providers, consumers, force
		})
	}

	s := spec(APIServiceExport, []string{"kbm"}, []string{"kbn"}, false)
	warnings, err := s.checkAPIs(members, s.objects(svc, mcsapi.Schemas{}, nil, false))
	if err == nil || len(warnings) != 0 {
		t.Fatalf("provider without the CRDs: err %v, warnings %v", err, warnings)
	}
	for _, w := range []string{"nothing written", `"kbm"`, "multicluster.x-k8s.io/v1alpha1 ServiceExport", "kubectl mcs init", "--force"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q lacks %q", err, w)
		}
	}

	s = spec(APIServiceExport, []string{"kbm"}, []string{"kbn"}, true)
	if warnings, err = s.checkAPIs(members, s.objects(svc, mcsapi.Schemas{}, nil, false)); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "--force") {
		t.Fatalf("--force: err %v, warnings %v", err, warnings)
	}

	s = spec(APIServiceExport, []string{"kbn"}, []string{"new"}, false)
	if warnings, err = s.checkAPIs(members, s.objects(svc, mcsapi.Schemas{}, nil, false)); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), `"new"`) {
		t.Fatalf("not collected: err %v, warnings %v", err, warnings)
	}

	// A MultiClusterService sends nothing of multicluster.x-k8s.io to the members.
	s = spec(APIMultiClusterService, []string{"kbm"}, []string{"kbn"}, false)
	if warnings, err = s.checkAPIs(members, s.objects(svc, mcsapi.Schemas{}, nil, false)); err != nil || len(warnings) != 0 {
		t.Fatalf("multiclusterservice: err %v, warnings %v", err, warnings)
	}
	members["kbm"] = karmada.MemberAPIs{Name: "kbm", Kinds: map[string]bool{"v1 Service": true}}
	if _, err = s.checkAPIs(members, s.objects(svc, mcsapi.Schemas{}, nil, false)); err == nil || !strings.Contains(err.Error(), "discovery.k8s.io/v1 EndpointSlice") {
		t.Fatalf("multiclusterservice toward a member without EndpointSlices: %v", err)
	}
}
