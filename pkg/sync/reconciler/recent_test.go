package reconciler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

func svc(name, rv, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
}

func render(in []*corev1.Service) []string {
	var out []string
	for _, s := range in {
		out = append(out, s.Name+"@"+s.ResourceVersion)
	}
	slices.Sort(out)
	return out
}

func all(*corev1.Service) bool { return true }

func TestOverlay(t *testing.T) {
	var r recent
	// Nothing written: the cache as it is.
	if got := render(overlay(&r, "Service", "ns", []*corev1.Service{svc("a", "5", "")}, all)); !slices.Equal(got, []string{"a@5"}) {
		t.Fatalf("empty overlay: %v", got)
	}
	r.wrote("Service", svc("a", "7", "10.0.0.1")) // update the cache has not seen
	r.wrote("Service", svc("b", "8", "10.0.0.2")) // create the cache has not seen
	r.wrote("Service", svc("x", "9", ""))         // another service's, filtered out below
	keep := func(s *corev1.Service) bool { return s.Name != "x" }
	cached := []*corev1.Service{svc("a", "5", "")}
	if got := render(overlay(&r, "Service", "ns", cached, keep)); !slices.Equal(got, []string{"a@7", "b@8"}) {
		t.Fatalf("stale cache: %v", got)
	}
	if got := render(overlay(&r, "Service", "other", cached, keep)); !slices.Equal(got, []string{"a@5"}) {
		t.Fatalf("other namespace: %v", got)
	}
	if got := render(overlay(&r, "EndpointSlice", "ns", cached, keep)); !slices.Equal(got, []string{"a@5"}) {
		t.Fatalf("other kind: %v", got)
	}
	// The cache catches up with a, and someone wrote b after us: the cache wins both times and
	// the entries are forgotten.
	cached = []*corev1.Service{svc("a", "7", "10.0.0.1"), svc("b", "11", "10.0.0.2")}
	if got := render(overlay(&r, "Service", "ns", cached, keep)); !slices.Equal(got, []string{"a@7", "b@11"}) {
		t.Fatalf("caught up: %v", got)
	}
	if _, ok := r.objs[recentKey("Service", "ns", "a")]; ok {
		t.Error("a caught-up entry is kept")
	}
	if _, ok := r.objs[recentKey("Service", "ns", "x")]; !ok {
		t.Error("another service's entry was dropped")
	}

	// A delete hides the cached object until the cache drops it; a newer object (recreated by
	// someone) shows again.
	r.deleted("Service", svc("a", "7", ""))
	if got := render(overlay(&r, "Service", "ns", []*corev1.Service{svc("a", "7", "")}, keep)); len(got) != 0 {
		t.Fatalf("deleted still shown: %v", got)
	}
	if got := render(overlay(&r, "Service", "ns", []*corev1.Service{svc("a", "12", "")}, keep)); !slices.Equal(got, []string{"a@12"}) {
		t.Fatalf("recreated object hidden: %v", got)
	}
	r.deleted("Service", svc("a", "12", ""))
	if got := render(overlay(&r, "Service", "ns", nil, keep)); len(got) != 0 {
		t.Fatalf("deleted and gone from the cache: %v", got)
	}
	if _, ok := r.objs[recentKey("Service", "ns", "a")]; ok {
		t.Error("a tombstone outlives the cached object")
	}

	// The informer's delete event forgets a creation it never showed, but not a newer object of
	// the same name.
	made := svc("d", "30", "10.0.0.4")
	made.UID = "uid-d"
	r.wrote("Service", made)
	old := svc("d", "25", "")
	old.UID = "uid-old"
	r.gone("Service", old)
	if got := render(overlay(&r, "Service", "ns", nil, keep)); !slices.Equal(got, []string{"d@30"}) {
		t.Fatalf("a delete of an older object hid our new one: %v", got)
	}
	r.gone("Service", made)
	if got := render(overlay(&r, "Service", "ns", nil, keep)); len(got) != 0 {
		t.Fatalf("deleted before the cache showed it, still shown: %v", got)
	}

	// Entries expire: a write whose event never came stops masking the cache.
	r.wrote("Service", svc("c", "20", "10.0.0.3"))
	e := r.objs[recentKey("Service", "ns", "c")]
	e.at = time.Now().Add(-recentTTL - time.Second)
	r.objs[recentKey("Service", "ns", "c")] = e
	if got := render(overlay(&r, "Service", "ns", []*corev1.Service{svc("c", "15", "")}, keep)); !slices.Equal(got, []string{"c@15"}) {
		t.Fatalf("expired entry still used: %v", got)
	}
}

func TestEcho(t *testing.T) {
	var r recent
	a := svc("a", "7", "10.0.0.1")
	a.UID = "u1"
	if r.echo("Service", a) {
		t.Error("echo of nothing written")
	}
	r.wrote("Service", a)
	other := func(rv string, uid types.UID) *corev1.Service {
		o := svc("a", rv, "10.0.0.1")
		o.UID = uid
		return o
	}
	for _, c := range []struct {
		name string
		kind string
		obj  *corev1.Service
		want bool
	}{
		{"an older version", "Service", other("5", "u1"), false},
		{"a newer version, somebody else's", "Service", other("9", "u1"), false},
		{"another object of that name", "Service", other("7", "u2"), false},
		{"another kind", "EndpointSlice", other("7", "u1"), false},
	} {
		if got := r.echo(c.kind, c.obj); got != c.want {
			t.Errorf("%s: echo %v, want %v", c.name, got, c.want)
		}
	}
	if r.len() != 1 {
		t.Fatalf("%d writes remembered after events that were not their echo, want 1", r.len())
	}
	if !r.echo("Service", other("7", "u1")) {
		t.Error("our write's event is not taken for its echo")
	}
	if n := r.len(); n != 0 {
		t.Errorf("%d writes remembered after the echo, want none: the cache holds the object now", n)
	}
	if r.echo("Service", other("7", "u1")) {
		t.Error("a second event of the same version is taken for an echo of a write forgotten")
	}
	r.wrote("Service", a)
	r.deleted("Service", a)
	if r.echo("Service", other("7", "u1")) {
		t.Error("an object we deleted is taken for an echo")
	}
}

func TestFirstKindPerCluster(t *testing.T) {
	a := func(cluster, kind, name string) engine.Action {
		return engine.Action{Cluster: cluster, Kind: kind, Name: name}
	}
	plan := []engine.Action{
		a("m1", snapshot.KindServiceImport, "s"), a("m1", snapshot.KindService, "derived-s"), a("m1", snapshot.KindEndpointSlice, "x"),
		a("m2", snapshot.KindEndpointSlice, "y"), a("m2", snapshot.KindEndpointSlice, "z"), a("m2", snapshot.KindServiceExport, "s"),
		a("m3", snapshot.KindServiceExport, "s"),
	}
	var got []string
	for _, round := range firstKindPerCluster(plan) {
		var names []string
		for _, x := range round {
			names = append(names, x.Cluster+"/"+x.Name)
		}
		got = append(got, strings.Join(names, ","))
	}
	if want := []string{"m1/s", "m2/y,m2/z", "m3/s"}; !slices.Equal(got, want) {
		t.Errorf("rounds %v, want %v", got, want)
	}
}

// A watch keeps no changes for longer than a sync: each sync's go to OnChanges when it ends
// (sync --watch prints them), in the order of a plan.
func TestWatchTellsEachSyncsChanges(t *testing.T) {
	a := engine.Action{Cluster: "m1", Kind: snapshot.KindService, Namespace: "demo", Name: "derived-serve", Verb: engine.VerbCreate}
	imp := engine.Action{Cluster: "m1", Kind: snapshot.KindServiceImport, Namespace: "demo", Name: "serve", Verb: engine.VerbCreate}
	k := key{Namespace: "demo", Name: "serve"}
	var told [][]Change
	r := &Reconciler{pending: map[key][]Change{}, opts: Options{OnChanges: func(c []Change) { told = append(told, c) }}}
	r.recordChanges(k, []engine.Action{a})
	if got := r.Changes(); len(got) != 1 || got[0].Name != "derived-serve" {
		t.Fatalf("a pass: changes %+v, want the one write", got)
	}
	r.tellChanges(k)
	if len(told) != 0 {
		t.Fatalf("a pass tells nothing: %+v", told)
	}
	r.watching = true
	r.recordChanges(k, []engine.Action{a, imp})
	if got := r.Changes(); len(got) != 0 {
		t.Fatalf("a watch: changes %+v, want none kept for a report", got)
	}
	r.tellChanges(k)
	r.tellChanges(k)
	if len(told) != 1 || len(told[0]) != 2 || told[0][0].Kind != snapshot.KindServiceImport || len(r.pending) != 0 {
		t.Fatalf("a watch: told %+v, pending %v; want the sync's two writes once, the import first", told, r.pending)
	}
}

// One object's actions stay in order (a delete before the create that replaces it); the rest may
// run at once.
func TestChainsByObject(t *testing.T) {
	act := func(cluster, kind, name, verb string) engine.Action {
		return engine.Action{Cluster: cluster, Kind: kind, Namespace: "demo", Name: name, Verb: verb}
	}
	actions := []engine.Action{
		act("m1", snapshot.KindEndpointSlice, "a", engine.VerbDelete),
		act("m1", snapshot.KindEndpointSlice, "b", engine.VerbCreate),
		act("m1", snapshot.KindEndpointSlice, "a", engine.VerbCreate),
		act("m2", snapshot.KindEndpointSlice, "a", engine.VerbCreate),
		act("m2", snapshot.KindServiceImport, "a", engine.VerbUpdate),
		act("m2", snapshot.KindServiceImport, "a", engine.VerbStatus),
	}
	got := chainsByObject(actions)
	want := [][]int{{0, 2}, {1}, {3}, {4, 5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("chains %v, want %v", got, want)
	}
}

func TestHandOverInPlace(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub}
	}
	upd, apply := metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	for _, c := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string // "" : no in-place patch
	}{
		{"the create's entry after another manager's", []metav1.ManagedFieldsEntry{entry("someone", upd, ""), entry("kubectl-mcs", upd, ""), entry("kubectl-mcs", apply, "status")},
			`[{"op":"test","path":"/metadata/managedFields/1/manager","value":"kubectl-mcs"},{"op":"test","path":"/metadata/managedFields/1/operation","value":"Update"},` +
				`{"op":"replace","path":"/metadata/managedFields/1/operation","value":"Apply"},{"op":"replace","path":"/metadata/resourceVersion","value":"42"}]`},
		{"already applied", []metav1.ManagedFieldsEntry{entry("kubectl-mcs", apply, "")}, ""},
		{"an update and an apply of ours", []metav1.ManagedFieldsEntry{entry("kubectl-mcs", apply, ""), entry("kubectl-mcs", upd, "")}, ""},
		{"none of ours", []metav1.ManagedFieldsEntry{entry("someone", upd, "")}, ""},
	} {
		o := &metav1.ObjectMeta{ResourceVersion: "42", ManagedFields: c.entries}
		if got := string(handOverInPlace(o, "kubectl-mcs")); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// handOverDue must say yes exactly when csaupgrade has a patch to make: it stands in for computing
// that patch on every update.
func TestHandOverDueAgreesWithCSAUpgrade(t *testing.T) {
	const fm = "kubectl-mcs"
	fields := func(keys ...string) *metav1.FieldsV1 {
		m := map[string]any{}
		for _, k := range keys {
			m["f:"+k] = map[string]any{}
		}
		raw, _ := json.Marshal(map[string]any{"f:spec": m})
		return &metav1.FieldsV1{Raw: raw}
	}
	managers := []string{fm, "someone"}
	ops := []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply}
	subs := []string{"", "status"}
	var kinds []metav1.ManagedFieldsEntry
	for i, m := range managers {
		for j, op := range ops {
			for k, sub := range subs {
				kinds = append(kinds, metav1.ManagedFieldsEntry{Manager: m, Operation: op, Subresource: sub, APIVersion: "v1", FieldsType: "FieldsV1",
					FieldsV1: fields(fmt.Sprint("k", i, j, k))})
			}
		}
	}
	// Every list of up to three entries drawn from those eight.
	var lists [][]metav1.ManagedFieldsEntry
	var grow func(prefix []metav1.ManagedFieldsEntry)
	grow = func(prefix []metav1.ManagedFieldsEntry) {
		lists = append(lists, prefix)
		if len(prefix) == 3 {
			return
		}
		for _, e := range kinds {
			grow(append(slices.Clone(prefix), e))
		}
	}
	grow(nil)
	for _, entries := range lists {
		o := &corev1.Service{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", ManagedFields: entries}}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(o, sets.New(fm), fm)
		if err != nil {
			t.Fatalf("%v: %v", entries, err)
		}
		if got, want := handOverDue(o, fm), patch != nil; got != want {
			t.Errorf("handOverDue %v, csaupgrade patch %v, for %+v", got, want, entries)
		}
	}
	if handOverDue(nil, fm) {
		t.Error("handOverDue(nil)")
	}
}

// len is how many writes are remembered.
func (r *recent) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.objs)
}
