package member

import (
	"errors"
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
	m, err := Joined(&clusterset.Connection{Ref: clusterset.Ref{Context: "m", ID: "m"}}, "v1beta1",
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

// A member turns unreachable only after ProbeFailures failed probes in a row, and reachable at
// the first answer; the time it turned unreachable is kept for eviction.
func TestProbedNeedsFailuresInARow(t *testing.T) {
	m, err := Joined(&clusterset.Connection{Ref: clusterset.Ref{Context: "m", ID: "m"}}, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	down := errors.New("connection refused")
	for i := 1; i < ProbeFailures; i++ {
		if m.Probed(down) || !m.State().Reachable {
			t.Fatalf("unreachable after %d failures", i)
		}
	}
	if m.Probed(nil) || !m.State().Reachable {
		t.Fatal("an answer between failures changed reachability")
	}
	for i := 1; i < ProbeFailures; i++ {
		m.Probed(down)
	}
	if !m.Probed(down) || m.State().Reachable || m.State().Since.IsZero() || m.State().Unreachable() == "" {
		t.Fatalf("not unreachable after %d failures in a row: %+v", ProbeFailures, m.State())
	}
	if !m.Probed(nil) || !m.State().Reachable {
		t.Fatal("not reachable again at the first answer")
	}
}

// SlicesOf finds a service's source slices, its copies, and any slice of its derived Service,
// also a copy whose labels were edited to disagree (sliceKeys indexes a copy that agrees once).
func TestSlicesOf(t *testing.T) {
	copyOf := func(name, mcs, src string) *discoveryv1.EndpointSlice {
		l := map[string]string{mcsv1beta1.LabelServiceName: mcs, names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue}
		if src != "" {
			l[discoveryv1.LabelServiceName] = src
		}
		return &discoveryv1.EndpointSlice{ObjectMeta: om("a", name, l)}
	}
	m, err := Joined(&clusterset.Connection{Ref: clusterset.Ref{Context: "m", ID: "m"}}, "v1beta1",
		&discoveryv1.EndpointSlice{ObjectMeta: om("a", "web-src", map[string]string{discoveryv1.LabelServiceName: "web"})},
		copyOf("web-copy", "web", names.DerivedServiceName("web")),
		copyOf("web-nosrc", "web", ""),
		copyOf("edited", "db", names.DerivedServiceName("web")), // serves web's derived Service
		&discoveryv1.EndpointSlice{ObjectMeta: om("a", "stray", map[string]string{discoveryv1.LabelServiceName: names.DerivedServiceName("web")})},
		&discoveryv1.EndpointSlice{ObjectMeta: om("a", "other-src", map[string]string{discoveryv1.LabelServiceName: "other"})})
	if err != nil {
		t.Fatal(err)
	}
	for svc, want := range map[string][]string{
		"web":   {"edited", "stray", "web-copy", "web-nosrc", "web-src"},
		"db":    {"edited"},
		"other": {"other-src"},
	} {
		var got []string
		for _, s := range m.SlicesOf("a", svc) {
			got = append(got, s.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("SlicesOf(a, %s) = %v, want %v", svc, got, want)
		}
	}
}
