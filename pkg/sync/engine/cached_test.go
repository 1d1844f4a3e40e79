package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// rounds runs sync's rounds against the servers until one writes nothing, at most n; it
// returns the writes of each round.
func rounds(t *testing.T, servers []*fakeServer, n int) [][]string {
	t.Helper()
	var out [][]string
	for range n {
		obs := Observed{Now: now, FieldManager: names.FieldManager}
		for _, s := range servers {
			obs.Clusters = append(obs.Clusters, s.observe())
		}
		acts := Plan(obs, Compute(obs))
		if len(acts) == 0 {
			return out
		}
		for _, a := range acts {
			for _, s := range servers {
				if s.id == a.Cluster {
					if err := s.write(a); err != nil {
						t.Fatalf("%s %s %s/%s: %v", a.Verb, a.Kind, a.Namespace, a.Name, err)
					}
				}
			}
		}
		out = append(out, summary(acts))
	}
	t.Fatalf("still writing after %d rounds: %q", n, out)
	return nil
}

// servingExporter is a member exporting ns1/serve (one port, 80/TCP) with the given exported annotations.
func servingExporter(id string, annotations map[string]string) *fakeServer {
	s := newFakeServer(id, false, []string{"ns1"})
	svc := mkService("ns1", "serve")
	svc.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
	must(s.create(snapshot.KindService, toUnstructured(svc), csaManager))
	e := mkExport("ns1", "serve", 0)
	e.TypeMeta = metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: mcsv1beta1.ServiceExportKindName}
	e.Spec.ExportedAnnotations = annotations
	must(s.create(snapshot.KindServiceExport, toUnstructured(e), csaManager))
	return s
}

// Defect: an export whose exportedAnnotations name kubectl's last-applied record had the import
// written on every round (the caches drop the annotation, so it never looked written) and a
// one-shot sync fail after 8 rounds. Now the import carries the other exported annotations, the
// export says which one it could not export, and the rounds end.
func TestExportedAnnotationTheCachesDrop(t *testing.T) {
	s := servingExporter("m1", map[string]string{snapshot.LastAppliedAnnotation: `{"kind":"Service"}`, "note": "x"})
	if got := rounds(t, []*fakeServer{s}, convergeRounds); len(got) > 2 {
		t.Errorf("%d rounds wrote, want 2 (create, then owner references and IPs): %q", len(got), got)
	}
	imp := s.objs[snapshot.KindServiceImport][key{Namespace: "ns1", Name: "serve"}]
	if a := imp.GetAnnotations(); a["note"] != "x" || a[snapshot.LastAppliedAnnotation] != "" {
		t.Errorf("import annotations %v, want note=x and no last-applied record", a)
	}
	e := fromUnstructured[mcsv1beta1.ServiceExport](s.objs[snapshot.KindServiceExport][key{Namespace: "ns1", Name: "serve"}])
	valid := findCond(e.Status.Conditions, mcsv1beta1.ServiceExportConditionValid)
	if valid == nil || valid.Status != metav1.ConditionTrue || valid.Reason != ReasonAnnotationsNotExported ||
		!strings.Contains(valid.Message, `"`+snapshot.LastAppliedAnnotation+`"`) {
		t.Errorf("Valid %+v, want True, %s, naming the annotation", valid, ReasonAnnotationsNotExported)
	}
	// The export stops naming it: Valid says Valid again, and nothing else is written.
	u := s.objs[snapshot.KindServiceExport][key{Namespace: "ns1", Name: "serve"}]
	must(unstructured.SetNestedStringMap(u.Object, map[string]string{"note": "x"}, "spec", "exportedAnnotations"))
	got := rounds(t, []*fakeServer{s}, convergeRounds)
	if len(got) != 1 || len(got[0]) != 1 || got[0][0] != "m1 status ServiceExport ns1/serve" {
		t.Errorf("after the export drops it: %q, want one status write", got)
	}
}

// Defect: a selector, a port or a traffic distribution another field manager put on derived-X
// was compared, and sync's apply, which never removes another manager's field, wrote it again
// on every round. Such fields are theirs: no write; a field sync set and no longer wants still
// is one.
func TestForeignFieldsOnDerivedService(t *testing.T) {
	s := servingExporter("m1", nil)
	rounds(t, []*fakeServer{s}, convergeRounds)
	for op := range foreignPolicies + 1 {
		s.foreign(foreignChange{op: op, name: "serve"})
	}
	derived := key{Namespace: "ns1", Name: "derived-serve"}
	svc := fromUnstructured[corev1.Service](s.objs[snapshot.KindService][derived])
	if len(svc.Spec.Selector) == 0 || len(svc.Spec.Ports) != 2 || svc.Spec.TrafficDistribution == nil {
		t.Fatalf("test premise: derived Service %+v", svc.Spec)
	}
	// internalTrafficPolicy Local is sync's field (the exporter's Cluster), taken back once.
	if got := rounds(t, []*fakeServer{s}, convergeRounds); len(got) != 1 || len(got[0]) != 1 || got[0][0] != "m1 update Service ns1/derived-serve" {
		t.Errorf("after foreign changes: %q, want one update (internalTrafficPolicy)", got)
	}
	svc = fromUnstructured[corev1.Service](s.objs[snapshot.KindService][derived])
	if len(svc.Spec.Selector) == 0 || len(svc.Spec.Ports) != 2 || *svc.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
		t.Errorf("derived Service %+v: the foreign fields stay, ours is back", svc.Spec)
	}
	// A port sync set and the exporter no longer has is removed.
	src := s.objs[snapshot.KindService][key{Namespace: "ns1", Name: "serve"}].DeepCopy()
	must(unstructured.SetNestedSlice(src.Object, []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"}}, "spec", "ports"))
	must(s.update(snapshot.KindService, src, csaManager))
	rounds(t, []*fakeServer{s}, convergeRounds)
	svc = fromUnstructured[corev1.Service](s.objs[snapshot.KindService][derived])
	var ports []int32
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Port)
	}
	if len(ports) != 2 || ports[0] == 80 || ports[1] == 80 {
		t.Errorf("derived Service ports %v, want 8080 and the foreign 9999", ports)
	}
}
