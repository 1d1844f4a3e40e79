package decode

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

func serviceImport(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
		"metadata": map[string]any{"namespace": "ns", "name": name, "resourceVersion": "7"},
		"spec":     spec,
	}}
}

// The store holds what Transform made of each object; Cached and List read it back typed, and
// Cached reports, for that object alone, one that did not decode.
func TestTransformCachedList(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	add := func(u *unstructured.Unstructured) {
		t.Helper()
		o, err := Transform[mcsv1beta1.ServiceImport](u)
		if err != nil {
			t.Fatalf("Transform %s: %v", u.GetName(), err)
		}
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	add(serviceImport("good", map[string]any{"type": "ClusterSetIP", "ips": []any{"10.0.0.1"},
		"ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}}}))
	add(serviceImport("bad", map[string]any{"ports": "not a list"}))

	si, err := Cached[mcsv1beta1.ServiceImport](store, "ns/good")
	if err != nil || si == nil {
		t.Fatalf("good: %v, %v", si, err)
	}
	if si.Spec.Type != mcsv1beta1.ClusterSetIP || len(si.Spec.IPs) != 1 || si.Spec.Ports[0].Port != 80 || si.ResourceVersion != "7" {
		t.Errorf("good decoded as %+v", si)
	}
	if again, _ := Cached[mcsv1beta1.ServiceImport](store, "ns/good"); again != si {
		t.Error("good decoded again on the second read: the store should hold the typed object")
	}
	if _, err := Cached[mcsv1beta1.ServiceImport](store, "ns/bad"); err == nil || !strings.Contains(err.Error(), "ServiceImport ns/bad") {
		t.Errorf("bad: err %v, want a decoding error naming ServiceImport ns/bad", err)
	}
	if got, err := Cached[mcsv1beta1.ServiceImport](store, "ns/absent"); err != nil || got != nil {
		t.Errorf("absent: %v, %v", got, err)
	}
	if l := List[mcsv1beta1.ServiceImport](store); len(l) != 1 || l[0] != si {
		t.Errorf("List: %v, want only good", l)
	}

	tomb := cache.DeletedFinalStateUnknown{Key: "ns/x"}
	if o, err := Transform[mcsv1beta1.ServiceImport](tomb); err != nil || o != any(tomb) {
		t.Errorf("tombstone: %v, %v", o, err)
	}
}
