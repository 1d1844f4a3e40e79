package reconciler

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// A write the apiserver refuses in one cluster: the other writes of the service go on (the other
// importer gets its slice), every export's Ready says which object cannot be written and why,
// the metrics count it, and once the write succeeds all of that clears.
func TestRefusedWriteIsToldAndTheRestGoesOn(t *testing.T) {
	var mu sync.Mutex
	var log []write
	clusters := oneExporter(t)
	var refuse atomic.Bool
	refuse.Store(true)
	refusal := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "derived-serve",
		field.ErrorList{field.Required(field.NewPath("spec", "ports").Index(0).Child("name"), "")})
	for _, c := range clusters {
		dyn := fakeAPIServer(c.ID(), 0, &mu, &log, map[string]map[string]any{}, nil)
		if c.ID() == "m2" {
			dyn.PrependReactor("*", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
				return refuse.Load(), nil, refusal
			})
		}
		c.Dynamic = dyn
	}
	reg := prometheus.NewRegistry()
	metrics := NewMetrics(reg)
	r := testReconciler(metrics, clusters...)
	serve := key{Namespace: "demo", Name: "serve"}

	err := r.syncKey(context.Background(), serve)
	if err == nil || !strings.Contains(err.Error(), `cluster "m2": Service demo/derived-serve`) || !strings.Contains(err.Error(), "spec.ports[0].name: Required value") {
		t.Fatalf("syncKey: %v, want the refusal naming the cluster and object", err)
	}
	if n := count(&mu, log, "m3", "endpointslices", ""); n != 1 {
		t.Errorf("m3 got %d slices, want its copy although m2's write fails", n)
	}
	want := `Service demo/derived-serve in "m2" cannot be written: Service "derived-serve" is invalid: spec.ports[0].name: Required value.`
	if c := lastReady(t, &mu, log); c["status"] != "False" || c["reason"] != "Failed" || c["message"] != want {
		t.Errorf("the export's Ready: %v\nwant False, Failed, %q", c, want)
	}
	if n := scrape(t, reg, "kubectl_mcs_write_failures_total", `cluster="m2"`, `kind="Service"`); n < 1 {
		t.Errorf("kubectl_mcs_write_failures_total{m2,Service} = %v", n)
	}
	if n := scrape(t, reg, "kubectl_mcs_failing_writes"); n != 1 {
		t.Errorf("kubectl_mcs_failing_writes = %v, want 1", n)
	}

	// Still refused: the next sync tries again and the export stays as it is (no rewrite).
	statuses := count(&mu, log, "m1", "serviceexports", "status")
	if err := r.syncKey(context.Background(), serve); err == nil {
		t.Fatal("second sync: no error while the write is refused")
	}
	if n := count(&mu, log, "m1", "serviceexports", "status"); n != statuses {
		t.Errorf("the export's status was written again (%d -> %d) although nothing changed", statuses, n)
	}

	refuse.Store(false)
	if err := r.syncKey(context.Background(), serve); err != nil {
		t.Fatalf("once accepted: %v", err)
	}
	if c := lastReady(t, &mu, log); c["status"] != "True" {
		t.Errorf("the export's Ready once written: %v", c)
	}
	if n := scrape(t, reg, "kubectl_mcs_failing_writes"); n != 0 {
		t.Errorf("kubectl_mcs_failing_writes = %v once written", n)
	}
}

// A write that fails for another reason (a conflict) is told only when it fails again in the
// next sync: a passing failure changes no export.
func TestPassingFailureIsNotTold(t *testing.T) {
	fs := &syncFailures{k: key{Namespace: "demo", Name: "serve"}, prev: map[object]failure{}, now: map[object]failure{}}
	a := engine.Action{Cluster: "m2", Kind: snapshot.KindService, Namespace: "demo", Name: "derived-serve", Verb: engine.VerbUpdate}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "services"}, "derived-serve", nil)
	fs.add([]engine.Action{a}, []failed{{action: a, err: conflict}})
	if got := fs.told(); len(got) != 0 {
		t.Errorf("a first conflict is told: %+v", got)
	}
	next := &syncFailures{k: fs.k, prev: fs.now, now: map[object]failure{}}
	if got := next.told(); len(got) != 0 {
		t.Errorf("told before it failed again: %+v", got)
	}
	next.add([]engine.Action{a}, []failed{{action: a, err: conflict}})
	if got := next.told(); len(got) != 1 || got[0].Name != "derived-serve" {
		t.Errorf("failed twice in a row, told %+v", got)
	}
	if next.settle(nil); len(next.told()) != 1 {
		t.Errorf("this sync's own failure forgotten")
	}
}

func count(mu *sync.Mutex, log []write, cluster, resource, sub string) int {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, w := range log {
		if w.cluster == cluster && w.resource == resource && w.sub == sub {
			n++
		}
	}
	return n
}

// lastReady is the Ready condition of the last status write of an export.
func lastReady(t *testing.T, mu *sync.Mutex, log []write) map[string]any {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].resource != "serviceexports" {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(log[i].body, "status", "conditions")
		for _, c := range conds {
			if c := c.(map[string]any); c["type"] == string(mcsv1beta1.ServiceExportConditionReady) {
				return c
			}
		}
	}
	t.Fatal("no status write of the export")
	return nil
}

// scrape is what `sync --watch` serves of metric name, summed over the series with labels.
func scrape(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	v, found, err := promtext.Sum(rec.Body, name, labels...)
	if err != nil || !found {
		t.Fatalf("%s %v: found %v, %v", name, labels, found, err)
	}
	return v
}

// A member not configured for the exported family refuses the derived Service: in the same sync
// its import's status says IPFamilyNotSupported (written although the cluster's other writes
// wait), and the next sync rewrites none of it.
func TestFamilyRefusalIsToldOnTheImport(t *testing.T) {
	var mu sync.Mutex
	var log []write
	clusters := oneExporter(t)
	refusal := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "derived-serve",
		field.ErrorList{field.Invalid(field.NewPath("spec", "ipFamilies").Index(0), "IPv6", "not configured on this cluster")})
	for _, c := range clusters {
		dyn := fakeAPIServer(c.ID(), 0, &mu, &log, map[string]map[string]any{}, nil)
		if c.ID() == "m2" {
			dyn.PrependReactor("*", "services", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, refusal })
		}
		c.Dynamic = dyn
	}
	r := testReconciler(nil, clusters...)
	serve := key{Namespace: "demo", Name: "serve"}
	if err := r.syncKey(context.Background(), serve); err == nil {
		t.Fatal("syncKey: no error while the derived Service is refused")
	}
	mu.Lock()
	var reason string
	for _, w := range log {
		if w.cluster == "m2" && w.resource == "serviceimports" && w.sub == "status" {
			conds, _, _ := unstructured.NestedSlice(w.body, "status", "conditions")
			for _, c := range conds {
				if m := c.(map[string]any); m["type"] == string(mcsv1beta1.ServiceImportConditionReady) {
					reason, _ = m["reason"].(string)
				}
			}
		}
	}
	mu.Unlock()
	if reason != string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported) {
		t.Fatalf("m2's import: last Ready reason written %q, want IPFamilyNotSupported", reason)
	}
	statuses := count(&mu, log, "m2", "serviceimports", "status")
	_ = r.syncKey(context.Background(), serve)
	if n := count(&mu, log, "m2", "serviceimports", "status"); n != statuses {
		t.Errorf("m2's import status written again (%d -> %d) although nothing changed", statuses, n)
	}
}
