package member

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// cachedForm is o as sync's informers hold it, and o as their transform saw it: decoded and
// trimmed, before it became a record.
func cachedForm(t *testing.T, kind string, o any) (held, trimmed any) {
	t.Helper()
	held, err := transforms(names.FieldManager)[kind](decoded(t, o))
	if err != nil {
		t.Fatal(err)
	}
	trimmed = decoded(t, o)
	switch kind {
	case snapshot.KindServiceExport:
		trimmed, err = decode.Transform[mcsv1beta1.ServiceExport](trimmed)
	case snapshot.KindServiceImport:
		trimmed, err = decode.Transform[mcsv1beta1.ServiceImport](trimmed)
	}
	if err != nil {
		t.Fatal(err)
	}
	Trim(mustAccessor(t, trimmed), names.FieldManager)
	return held, trimmed
}

// What sync wrote is held as a record and reads back as the object the transform saw; what
// others wrote is held as the object.
func TestRecordsReadBackAsTheObject(t *testing.T) {
	clusters := []string{"member1", "member2", "member3", "member4", "member5"}
	objs, _ := benchObjects(0, clusters, 2, 2)
	records := 0
	for kind, l := range objs {
		for _, o := range l {
			held, want := cachedForm(t, kind, o)
			if _, ok := held.(*record); ok {
				records++
			} else if names.IsManaged(mustAccessor(t, want).GetLabels()) && kind != "Namespace" {
				t.Errorf("%s %s of ours is not held as a record", kind, mustAccessor(t, want).GetName())
			}
			got, err := typed(held)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s reads back as\n%#v\nwant\n%#v", kind, mustAccessor(t, want).GetName(), got, want)
			}
		}
	}
	// Member1 of the bench: an import, a derived Service and member2's copy per service; its own
	// copy of its slice too (sync copies every exporter's slice into every importer).
	if records != 2*4 {
		t.Errorf("%d records, want 8", records)
	}
}

// The member's readers find records as they find objects: by name, by service, and as keys.
func TestReadersOfRecords(t *testing.T) {
	clusters := []string{"member1", "member2", "member3", "member4", "member5"}
	objs, _ := benchObjects(3, clusters, 2, 2)
	var held []any
	for kind, l := range objs {
		for _, o := range l {
			h, _ := cachedForm(t, kind, o)
			if u, ok := h.(interface{ GetKind() string }); ok && u.GetKind() == "" {
				t.Fatalf("%T without a kind", h)
			}
			held = append(held, h)
		}
	}
	m, err := Joined(&clusterset.Connection{Ref: clusterset.Ref{Context: "m", ID: "member4"}}, "v1beta1", held...)
	if err != nil {
		t.Fatal(err)
	}
	svc := "svc-00001"
	if s, err := m.Service(benchNS, names.DerivedServiceName(svc)); err != nil || s.Spec.ClusterIP != "10.96.1.1" || s.Labels[mcsv1beta1.LabelServiceName] != svc {
		t.Errorf("derived Service: %v, %+v", err, s)
	}
	if _, err := m.Service(benchNS, "nope"); err == nil {
		t.Errorf("a Service that is not there is found")
	}
	if si, err := m.Import(benchNS, svc); err != nil || si == nil || len(si.Status.Clusters) != 2 || si.Spec.IPs[0] != "10.96.2.2" {
		t.Errorf("import: %v, %+v", err, si)
	}
	var got []string
	for _, s := range m.SlicesOf(benchNS, svc) {
		got = append(got, s.Labels[mcsv1beta1.LabelSourceCluster])
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"member1", "member2"}) {
		t.Errorf("copies of %s from %v, want member1, member2", svc, got)
	}
	if keys := m.Keys(benchNS); len(keys) != 2 {
		t.Errorf("keys %v, want both services", keys)
	}
	v := m.View()
	if len(v.Services) != 2 || len(v.ServiceImports) != 2 || len(v.EndpointSlices) != 4 {
		t.Errorf("view: %d Services, %d imports, %d slices; want 2, 2, 4", len(v.Services), len(v.ServiceImports), len(v.EndpointSlices))
	}
}

func mustAccessor(t *testing.T, o any) metav1.Object {
	t.Helper()
	a, err := meta.Accessor(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Readers at the same time share one decode of a record (a service's pipelines each observe
// every member); once none holds it, the next read decodes again, into the same object.
func TestRecordReadersShareOneDecode(t *testing.T) {
	objs, _ := benchObjects(0, []string{"member1", "member2", "member3", "member4", "member5"}, 2, 2)
	n := 0
	for kind, l := range objs {
		for _, o := range l {
			held, want := cachedForm(t, kind, o)
			r, ok := held.(*record)
			if !ok {
				continue
			}
			n++
			a, err := typed(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := typed(r)
			if a != b {
				t.Errorf("%s %s: two reads while the first is held decoded twice", kind, r.name)
			}
			runtime.KeepAlive(a)
			a, b = nil, nil
			runtime.GC()
			c, err := typed(r)
			if err != nil || !reflect.DeepEqual(c, want) {
				t.Errorf("%s %s: read after a collection: %v\n%#v\nwant\n%#v", kind, r.name, err, c, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no records among the bench objects")
	}
}
