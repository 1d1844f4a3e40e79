package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// fakeObjects is one object behind the replay's three calls: a patch that sets another
// resourceVersion than the object's is a conflict, as the apiserver answers it.
type fakeObjects struct {
	obj            *unstructured.Unstructured
	patches, reads int
}

func (f *fakeObjects) Create(_ context.Context, o *unstructured.Unstructured, _ metav1.CreateOptions, _ ...string) (*unstructured.Unstructured, error) {
	return o, nil
}

func (f *fakeObjects) Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) {
	f.reads++
	return f.obj.DeepCopy(), nil
}

func (f *fakeObjects) Patch(_ context.Context, name string, _ types.PatchType, patch []byte, _ metav1.PatchOptions, _ ...string) (*unstructured.Unstructured, error) {
	f.patches++
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	cur, _ := f.obj.MarshalJSON()
	next, err := p.Apply(cur)
	if err != nil {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "serviceimports"}, name, err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(next); err != nil {
		return nil, err
	}
	if out.GetResourceVersion() != f.obj.GetResourceVersion() { // the apiserver's precondition
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "serviceimports"}, name, nil)
	}
	out.SetResourceVersion(f.obj.GetResourceVersion() + "1")
	f.obj = out
	return out.DeepCopy(), nil
}

// Sync may hand one object over twice (it wrote more than it created): the replay makes the
// second hand-over from what the first left, never fails on the first's resourceVersion.
func TestReplayHandsOverTwice(t *testing.T) {
	tmpl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "svc", "namespace": "ns"}, "spec": map[string]any{"type": "ClusterSetIP"}}}
	created := []*unstructured.Unstructured{replayObject(tmpl, "ServiceImport", 0)}
	created[0].SetResourceVersion("1")
	created[0].SetManagedFields(updateEntry())
	f := &fakeObjects{obj: created[0].DeepCopy()}
	for n := range 2 {
		if err := replayWrite(context.Background(), f, tmpl, "ServiceImport", "ownership", n, created, false); err != nil {
			t.Fatalf("hand-over %d: %v", n+1, err)
		}
	}
	if f.patches != 1 || f.reads != 1 {
		t.Errorf("%d patches and %d reads; want the hand-over once, then a read", f.patches, f.reads)
	}
	if m := f.obj.GetManagedFields(); len(m) != 1 || m[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managedFields after the hand-over: %+v", m)
	}
	// A hand-over from a stale copy: the conflict is answered by reading the object again.
	f = &fakeObjects{obj: created[0].DeepCopy()}
	f.obj.SetResourceVersion("5")
	f.obj.SetManagedFields(nil)
	f.obj.SetManagedFields(updateEntry())
	created[0].SetManagedFields(updateEntry())
	if err := replayWrite(context.Background(), f, tmpl, "ServiceImport", "ownership", 0, created, false); err != nil {
		t.Fatalf("a stale copy: %v", err)
	}
	if f.patches != 2 || f.reads != 1 {
		t.Errorf("a stale copy: %d patches and %d reads; want a conflict, a read, the hand-over", f.patches, f.reads)
	}
}

func updateEntry() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: names.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "multicluster.x-k8s.io/v1beta1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:type":{}}}`)}}}
}

// Writes sync made again on one object (a status written twice) never run beside each other: the
// second works from what the first left (the old replay ran them at once and raced on it).
func TestReplayRepeatsOneObjectInTurn(t *testing.T) {
	const objects, n = 3, 9
	var mu sync.Mutex
	busy := map[int]bool{}
	var done []int
	err := inPasses(8, n, objects, func(i int) error {
		mu.Lock()
		if busy[i%objects] {
			mu.Unlock()
			return fmt.Errorf("write %d ran beside another write of object %d", i, i%objects)
		}
		busy[i%objects] = true
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		busy[i%objects] = false
		done = append(done, i)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for at, i := range done {
		seen[i]++
		if i >= objects && !slices.Contains(done[:at], i-objects) {
			t.Errorf("write %d came before write %d of the same object", i, i-objects)
		}
	}
	if len(seen) != n || len(done) != n {
		t.Errorf("writes made %v, want each of 0..%d once", done, n-1)
	}
}
