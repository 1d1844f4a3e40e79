package status

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// binding is a ResourceBinding of the resource with a Scheduled condition (none when status "").
func binding(name, apiVersion, kind, resName, status, reason, msg string) *unstructured.Unstructured {
	res := map[string]any{"apiVersion": apiVersion, "kind": kind, "namespace": "demo", "name": resName}
	var conds []map[string]any
	if status != "" {
		conds = append(conds, cond(ConditionScheduled, status, reason, msg))
	}
	return obj("work.karmada.io/v1alpha2", "ResourceBinding", "demo", name, map[string]any{"resource": res}, conds...)
}

const noFit = "0/3 clusters are available: 1 cluster(s) did not have the API resource, 2 cluster(s) did not match the placement cluster affinity constraint."

// A ResourceBinding of what we propagated that Karmada did not schedule makes its object
// Degraded with Karmada's reason, and is listed; a binding scheduled, not yet reported on, or of
// what another policy placed is not.
func TestKarmadaUnscheduledBindings(t *testing.T) {
	in := karmadaInput()
	in.Policies = append(in.Policies,
		policy("demo", "serve-workload-policy", []any{"member1"}, map[string]any{"apiVersion": "v1", "kind": "Service", "name": "serve"},
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "serve-app"}))
	foreign := policy("demo", "theirs", []any{"member1"}, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg"})
	delete(foreign.Object["metadata"].(map[string]any), "labels")
	in.Policies = append(in.Policies, foreign)
	in.ResourceBindings = []*unstructured.Unstructured{
		binding("serve-serviceexport", "multicluster.x-k8s.io/v1alpha1", "ServiceExport", "serve", "False", "NoClusterFit", noFit),
		binding("serve-serviceimport", "multicluster.x-k8s.io/v1alpha1", "ServiceImport", "serve", "True", "Success", "ok"),
		binding("serve-app-deployment", "apps/v1", "Deployment", "serve-app", "False", "NoClusterFit", noFit),
		binding("broken-service", "v1", "Service", "broken", "False", "NoClusterFit", noFit), // the MultiClusterService's
		binding("cfg-configmap", "v1", "ConfigMap", "cfg", "False", "NoClusterFit", noFit),
		binding("lonely-serviceexport", "multicluster.x-k8s.io/v1alpha1", "ServiceExport", "lonely", "", "", ""),
	}
	l := BuildKarmada(in)
	var got []string
	for _, b := range l.ResourceBindings {
		got = append(got, b.Name+"="+b.Service+":"+b.Reason)
	}
	if strings.Join(got, " ") != "broken-service=broken:NoClusterFit serve-app-deployment=serve:NoClusterFit serve-serviceexport=serve:NoClusterFit" {
		t.Fatalf("unscheduled bindings %v", got)
	}
	se := l.ServiceExports[1]
	if se.Name != "serve" || se.Health != Degraded || !strings.Contains(strings.Join(se.Problems, " "), "ResourceBinding serve-serviceexport is Scheduled=False (NoClusterFit): "+noFit) {
		t.Errorf("serve export %+v", se)
	}
	if si := l.ServiceImports[1]; si.Health != Healthy {
		t.Errorf("scheduled import %+v", si)
	}
	if l.ServiceExports[0].Name != "lonely" || strings.Contains(strings.Join(l.ServiceExports[0].Problems, " "), "scheduled") {
		t.Errorf("a binding without Scheduled condition: %+v", l.ServiceExports[0])
	}
	for _, m := range l.MultiClusterServices {
		if m.Name == "broken" && !strings.Contains(strings.Join(m.Problems, " "), "not scheduled its Service: ResourceBinding broken-service") {
			t.Errorf("broken %+v", m.Problems)
		}
	}

	var b bytes.Buffer
	if err := PrintKarmada(&b, l, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RESOURCEBINDING NAMESPACE RESOURCE SCHEDULED REASON", "serve-serviceexport demo ServiceExport/serve False NoClusterFit"} {
		if !hasLine(b.String(), want) {
			t.Errorf("no line %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := DescribeKarmada(&b, l, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ResourceBinding:     demo/serve-app-deployment\n") || !strings.Contains(b.String(), "Reason:              NoClusterFit\n") {
		t.Errorf("describe:\n%s", b.String())
	}
}

func hasLine(out, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == want {
			return true
		}
	}
	return false
}

// TestKarmadaBindingSchema pins the documented JSON field names (docs/output.md), and an empty
// list is [] rather than null.
func TestKarmadaBindingSchema(t *testing.T) {
	in := karmadaInput()
	b, _ := json.Marshal(BuildKarmada(in))
	if !strings.Contains(string(b), `"resourceBindings":[]`) {
		t.Errorf("no unscheduled binding: %s", b)
	}
	in.ResourceBindings = []*unstructured.Unstructured{binding("serve-serviceexport", "multicluster.x-k8s.io/v1alpha1", "ServiceExport", "serve", "False", "NoClusterFit", noFit)}
	b, _ = json.Marshal(BuildKarmada(in).ResourceBindings[0])
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range doc {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if got := strings.Join(ks, ","); got != "apiVersion,creationTimestamp,message,name,namespace,reason,resource,scheduled,service" {
		t.Errorf("keys %s", got)
	}
}
