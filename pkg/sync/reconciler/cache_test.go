package reconciler

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

// The informer's store holds what decodeAs made of each object; cached reads it back typed, and
// reports, for that object alone, one that did not decode.
func TestDecodeAsAndCached(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	add := func(u *unstructured.Unstructured) {
		t.Helper()
		o, err := decodeAs[mcsv1beta1.ServiceImport](u)
		if err != nil {
			t.Fatalf("decodeAs %s: %v", u.GetName(), err)
		}
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	add(serviceImport("good", map[string]any{"type": "ClusterSetIP", "ips": []any{"10.0.0.1"},
		"ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}}}))
	add(serviceImport("bad", map[string]any{"ports": "not a list"}))

	got, err := cached[mcsv1beta1.ServiceImport](store, "ns", "good")
	if err != nil || len(got) != 1 {
		t.Fatalf("good: %v, %v", got, err)
	}
	si := got[0]
	if si.Spec.Type != mcsv1beta1.ClusterSetIP || len(si.Spec.IPs) != 1 || si.Spec.Ports[0].Port != 80 || si.ResourceVersion != "7" {
		t.Errorf("good decoded as %+v", si)
	}
	if again, _ := cached[mcsv1beta1.ServiceImport](store, "ns", "good"); again[0] != si {
		t.Error("good decoded again on the second read: the store should hold the typed object")
	}

	if _, err := cached[mcsv1beta1.ServiceImport](store, "ns", "bad"); err == nil || !strings.Contains(err.Error(), "ns/bad") {
		t.Errorf("bad: err %v, want a decoding error naming ns/bad", err)
	}
	if got, err := cached[mcsv1beta1.ServiceImport](store, "ns", "absent"); err != nil || got != nil {
		t.Errorf("absent: %v, %v", got, err)
	}

	tomb := cache.DeletedFinalStateUnknown{Key: "ns/x"}
	if o, err := decodeAs[mcsv1beta1.ServiceImport](tomb); err != nil || o != any(tomb) {
		t.Errorf("tombstone: %v, %v", o, err)
	}
}
