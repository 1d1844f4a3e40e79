package member

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

func om(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
}

// Keys names the exported services, those with an import of ours and those with slices of ours,
// in one namespace or in all; a foreign import or slice does not count.
func TestKeys(t *testing.T) {
	ours := map[string]string{names.ManagedByLabel: names.ManagedByValue}
	m, err := Joined(&clusterset.Member{Ref: clusterset.Ref{Context: "m", ID: "m"}}, "v1beta1",
		&mcsv1beta1.ServiceExport{ObjectMeta: om("a", "exported", nil)},
		&mcsv1beta1.ServiceExport{ObjectMeta: om("b", "exported", nil)},
		&mcsv1beta1.ServiceImport{ObjectMeta: om("a", "imported", ours)},
		&mcsv1beta1.ServiceImport{ObjectMeta: om("a", "foreign", nil)},
		&discoveryv1.EndpointSlice{ObjectMeta: om("a", "derived-sliced-x", map[string]string{
			mcsv1beta1.LabelServiceName: "sliced", names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue})},
		&discoveryv1.EndpointSlice{ObjectMeta: om("b", "other-y", map[string]string{
			mcsv1beta1.LabelServiceName: "other", names.EndpointSliceManagedByLabel: "someone-else"})})
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string][]string{
		"":  {"a/exported", "a/imported", "a/sliced", "b/exported"},
		"a": {"a/exported", "a/imported", "a/sliced"},
		"b": {"b/exported"},
		"c": {},
	} {
		var got []string
		for _, k := range m.Keys(ns) {
			got = append(got, k.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("keys(%q) = %v, want %v", ns, got, want)
		}
	}
}
