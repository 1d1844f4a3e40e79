package reconciler

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// readMember is a member whose caches synced, holding objs (typed, or unstructured for an
// export that does not decode) and namespace demo in phase nsPhase.
func readMember(t *testing.T, id string, nsPhase corev1.NamespacePhase, objs ...any) *target {
	t.Helper()
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: nsPhase}})
	m, err := member.Joined(&clusterset.Connection{Ref: clusterset.Ref{Context: id, ID: id}}, mcsapi.V1beta1, objs...)
	if err != nil {
		t.Fatal(err)
	}
	return &target{Cache: m}
}

func svcObj(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
}

// An export that does not decode leaves out its own cluster for that service (its records stand)
// and is reported; the rest of the clusterset is decided as usual. A terminating namespace
// imports nothing; a member not synced yet is not read.
func TestObserveMembership(t *testing.T) {
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
		"metadata": map[string]any{"namespace": "demo", "name": "serve"}, "spec": "not an object"}}
	good := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", CreationTimestamp: metav1.Now()}}
	unsynced := &target{Cache: member.New([]*clusterset.Connection{{Ref: clusterset.Ref{Context: "m4", ID: "m4"}}}, member.Config{})[0]}
	r := &Reconciler{opts: Options{UnreachableTimeout: time.Minute}, now: time.Now, clusters: []*target{
		readMember(t, "m1", corev1.NamespaceActive, bad, svcObj("demo", "serve")),
		readMember(t, "m2", corev1.NamespaceActive, good, svcObj("demo", "serve")),
		readMember(t, "m3", corev1.NamespaceTerminating),
		unsynced,
	}}
	obs, problems := r.observe("demo", "serve")
	var ids []string
	for _, c := range obs.Clusters {
		ids = append(ids, c.ID)
		if c.ID == "m3" && len(c.Namespaces) != 0 {
			t.Errorf("m3's terminating namespace counts as importing")
		}
	}
	if strings.Join(ids, ",") != "m2,m3" || strings.Join(obs.Members, ",") != "m1,m2,m3,m4" {
		t.Errorf("read %v of members %v, want m2,m3 of m1-m4", ids, obs.Members)
	}
	// m3 cannot import what m2 exports: sync's report says so (status says Degraded).
	if len(problems) != 2 || !strings.Contains(problems[0], `cluster "m1": ServiceExport demo/serve`) ||
		problems[1] != `service demo/serve: not imported in "m3": it has no namespace "demo" (a service is imported only where its namespace exists)` {
		t.Errorf("problems %q", problems)
	}
	d := engine.Compute(obs)
	if len(d.Clusters["m2"].ServiceImports) != 1 || len(d.Clusters["m3"].ServiceImports) != 0 {
		t.Errorf("imports: m2 %d, m3 %d; want the service imported in m2 only", len(d.Clusters["m2"].ServiceImports), len(d.Clusters["m3"].ServiceImports))
	}

	// Unreachable past the timeout: evicted.
	r.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	for range member.ProbeFailures {
		r.clusters[1].Probed(errors.New("connection refused"))
	}
	if obs, _ := r.observe("demo", "serve"); strings.Join(obs.Evicted, ",") != "m2" {
		t.Errorf("evicted %v, want m2", obs.Evicted)
	}
}

// A member unreachable past the timeout requeues every service once per outage, not on every
// tick of evictExpired; a second outage requeues them again.
func TestEvictionRequeuesOncePerOutage(t *testing.T) {
	r := &Reconciler{opts: Options{UnreachableTimeout: time.Minute}, now: time.Now, queue: newQueue(time.Now), clusters: []*target{
		readMember(t, "m1", corev1.NamespaceActive, exportObj("serve")),
		readMember(t, "m2", corev1.NamespaceActive, exportObj("other")),
	}}
	defer r.queue.ShutDown()
	queued := func() int {
		n := r.queue.Len()
		for range n {
			k, _ := r.queue.Get()
			r.queue.Done(k)
		}
		return n
	}
	down := func() {
		for range member.ProbeFailures {
			r.clusters[1].Probed(errors.New("connection refused"))
		}
	}
	down()
	if r.evictExpired(nil); queued() != 0 {
		t.Fatalf("requeued before the timeout")
	}
	r.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	for tick, want := range []int{2, 0, 0} {
		if r.evictExpired(nil); queued() != want {
			t.Errorf("tick %d of the outage: requeued other than %d services", tick, want)
		}
	}
	r.clusters[1].Probed(nil)
	time.Sleep(time.Millisecond)
	down()
	if r.evictExpired(nil); queued() != 2 {
		t.Errorf("a second outage did not requeue every service")
	}
}

func exportObj(name string) *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
}

// testReconciler syncs clusters as sync does, with metrics when not nil, and retries nothing
// within a test (an hour's backoff).
func testReconciler(metrics *Metrics, clusters ...*target) *Reconciler {
	return &Reconciler{opts: Options{FieldManager: names.FieldManager, Metrics: metrics}, now: time.Now, clusters: clusters,
		conflicts: map[key][]engine.Conflict{}, skips: map[key][]string{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[key](time.Hour, time.Hour))}
}
