//go:build e2e

package reconciler

// Long-running memory: services churn (created, exported, in conflict, shadowed by a user's
// import, deleted) under a running `sync --watch` loop; afterwards every map sync keeps per
// service is back to its size at the start. Run by `make test-e2e`; E2E_CHURN sets how long
// it churns (default 30s).

import (
	"context"
	"fmt"
	"maps"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

func TestChurnLeavesNoServiceBehind(t *testing.T) {
	churn := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("E2E_CHURN")); err == nil {
		churn = d
	}
	m1, m2 := realMember(t, "member1"), realMember(t, "member2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "e2e-churn-" + utilrand.String(5)
	for _, m := range []*clusterset.Connection{m1, m2} {
		servesMCS(t, m)
		if _, err := m.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	r := New([]*clusterset.Connection{m1, m2}, Options{Namespace: ns, OnChanges: func([]Change) {}})
	r.Start(ctx)
	r.WaitForSync(ctx, 30*time.Second)
	go r.Run(ctx, 2)
	time.Sleep(time.Second)
	start := r.mapSizes()

	gvrSE, gvrSI := mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports), mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports)
	object := func(kind, name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mcsapi.Group + "/" + mcsapi.V1beta1, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns}}}
		if spec != nil {
			u.Object["spec"] = spec
		}
		return u
	}
	exported := func(m *clusterset.Connection, name string, port int32) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Name: "http", Port: port}}}}
		if _, err := m.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Dynamic.Resource(gvrSE).Namespace(ns).Create(ctx, object("ServiceExport", name, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	peak := map[string]int{}
	deadline := time.Now().Add(churn)
	for batch := 0; time.Now().Before(deadline); batch++ {
		var made []string
		for i := range 6 {
			name := fmt.Sprintf("svc-%d-%d", batch, i)
			made = append(made, name)
			exported(m1, name, 80)
			switch i % 3 {
			case 1: // a port conflict
				exported(m2, name, 81)
			case 2: // a user's import of the same name: member2 is skipped
				imp := object("ServiceImport", name, map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}})
				if _, err := m2.Dynamic.Resource(gvrSI).Namespace(ns).Create(ctx, imp, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(1500 * time.Millisecond)
		for k, n := range r.mapSizes() {
			peak[k] = max(peak[k], n)
		}
		for _, name := range made {
			for _, m := range []*clusterset.Connection{m1, m2} {
				_ = m.Dynamic.Resource(gvrSE).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
				_ = m.Client.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
			}
			_ = m2.Dynamic.Resource(gvrSI).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}) // the user's; ours goes with the export
		}
		names = append(names, made...)
	}
	t.Logf("%d services churned in %v; peak sizes %v", len(names), churn, peak)
	for _, k := range []string{"skips", "conflicts", "fair queue"} {
		if peak[k] <= start[k] {
			t.Errorf("the churn never grew %s (%d at the start, %d at most): it proves nothing", k, start[k], peak[k])
		}
	}

	var now map[string]int
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		now = r.mapSizes()
		return maps.Equal(now, start), nil
	})
	if err != nil {
		t.Errorf("after the churn, the per-service maps are %v; at the start %v", now, start)
	}
	for _, n := range names {
		if q := r.queue.NumRequeues(key{Namespace: ns, Name: n}); q != 0 {
			t.Errorf("the rate limiter still counts %d retries of %s", q, n)
		}
	}
}
