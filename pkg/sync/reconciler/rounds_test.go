package reconciler

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// An apiserver that silently drops a field we write would have sync write it forever: the rounds
// are bounded, the service comes back with the queue's backoff, not at once.
func TestDroppedFieldIsBounded(t *testing.T) {
	serve := key{Namespace: "demo", Name: "serve"}
	var mu sync.Mutex
	var log []write
	held := map[string]map[string]any{} // what this "apiserver" holds, by resource/name
	patches := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(log)
	}
	dyn := fakeAPIServer("m1", 0, &mu, &log, held, func(obj map[string]any) {
		unstructured.RemoveNestedField(obj, "spec", "ipFamilies") // dropped, every time
	})
	ours := map[string]string{names.ManagedByLabel: names.ManagedByValue}
	svc := svcObj("demo", "serve")
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	imp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-imp", ResourceVersion: "5",
		Labels: ours, Annotations: map[string]string{names.DerivedServiceAnnotation: "derived-serve"}}}
	exp := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-exp", CreationTimestamp: metav1.Now()}}
	m := readMember(t, "m1", corev1.NamespaceActive, svc, exp, imp)
	m.Dynamic = dyn
	r := testReconciler(nil, m)

	held["serviceimports/serve"] = map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "serve", "namespace": "demo", "uid": "u-imp",
			"labels": map[string]any{names.ManagedByLabel: names.ManagedByValue}, "annotations": map[string]any{names.DerivedServiceAnnotation: "derived-serve"}}}
	err := r.syncKey(context.Background(), serve)
	if err == nil || !strings.Contains(err.Error(), "still wants writes after") {
		t.Fatalf("syncKey: %v, want the rounds' bound", err)
	}
	if n := patches(); n == 0 || n > 20 {
		t.Errorf("%d writes for one service, want a bounded few", n)
	}

	// The worker puts it back rate limited (an hour here), not at once.
	r.queue.Add(serve)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.worker(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for r.queue.NumRequeues(serve) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	before := patches()
	time.Sleep(300 * time.Millisecond)
	if r.queue.NumRequeues(serve) != 1 || patches() != before {
		t.Errorf("requeues %d, writes %d -> %d while backing off", r.queue.NumRequeues(serve), before, patches())
	}
	cancel()
	r.queue.ShutDown()
	<-done
}

// merge lays patch over obj the way an apply of maps does.
func merge(obj, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if om, ok := out[k].(map[string]any); ok {
				out[k] = merge(om, pm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// A refused apply is the sync's error, naming the cluster and object, and is not recorded as
// written (it once reached the decoder as a nil object and panicked).
func TestRefusedApplyIsAnError(t *testing.T) {
	serve := key{Namespace: "demo", Name: "serve"}
	var mu sync.Mutex
	var log []write
	held := map[string]map[string]any{}
	dyn := fakeAPIServer("m1", 0, &mu, &log, held, nil)
	dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: a.GetResource().Resource}, "serve", errors.New("no patch for you"))
	})
	ours := map[string]string{names.ManagedByLabel: names.ManagedByValue}
	imp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-imp", ResourceVersion: "5",
		Labels: ours, Annotations: map[string]string{names.DerivedServiceAnnotation: "derived-serve"}}}
	exp := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-exp", CreationTimestamp: metav1.Now()}}
	m := readMember(t, "m1", corev1.NamespaceActive, svcObj("demo", "serve"), exp, imp)
	m.Dynamic = dyn
	r := testReconciler(nil, m)
	held["serviceimports/serve"] = map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "serve", "namespace": "demo", "uid": "u-imp", "resourceVersion": "5",
			"labels": map[string]any{names.ManagedByLabel: names.ManagedByValue}, "annotations": map[string]any{names.DerivedServiceAnnotation: "derived-serve"}}}

	err := r.syncKey(context.Background(), serve)
	if err == nil || !strings.Contains(err.Error(), `cluster "m1"`) || !strings.Contains(err.Error(), "no patch for you") {
		t.Fatalf("syncKey: %v, want the refusal, naming the cluster", err)
	}
	for _, c := range r.Changes() {
		if c.Action != engine.VerbCreate { // creates are not refused here: they go on
			t.Errorf("recorded as written: %v", c)
		}
	}
}
