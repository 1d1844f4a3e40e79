package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// write is one write a fake apiserver answered.
type write struct {
	cluster, resource, name, sub string
	body                         map[string]any
	done                         time.Time
}

// fakeAPIServer answers creates and applies for one cluster (merging maps into held, by
// resource/name), after delay, and logs each write; alter, when set, changes what is kept.
func fakeAPIServer(id string, delay time.Duration, mu *sync.Mutex, log *[]write, held map[string]map[string]any, alter func(map[string]any)) *dynamicfake.FakeDynamicClient {
	n := 0
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	dyn.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var body []byte
		var name string
		switch a := a.(type) {
		case k8stesting.PatchAction:
			body, name = a.GetPatch(), a.GetName()
		case k8stesting.CreateAction:
			u := a.GetObject().(*unstructured.Unstructured)
			body, _ = json.Marshal(u.Object)
			name = u.GetName()
		default:
			return false, nil, nil
		}
		time.Sleep(delay)
		var patch map[string]any
		if err := json.Unmarshal(body, &patch); err != nil {
			return true, nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		k := a.GetResource().Resource + "/" + name
		obj := merge(held[k], patch)
		if alter != nil {
			alter(obj)
		}
		held[k] = obj
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
		u.SetResourceVersion(strconv.Itoa(1000 + n))
		if u.GetUID() == "" {
			u.SetUID(types.UID(id + "-" + k))
			held[k]["metadata"].(map[string]any)["uid"] = string(u.GetUID())
		}
		*log = append(*log, write{cluster: id, resource: a.GetResource().Resource, name: name, sub: a.GetSubresource(), body: patch, done: time.Now()})
		return true, u, nil
	})
	return dyn
}

// Each cluster goes through its own writes at its own pace: a slow cluster holds up no other. The
// export's status is still written once, after every import, with Ready true.
// oneExporter is demo/serve exported from m1 (one slice, one ready endpoint), with m2 and m3
// holding the namespace.
func oneExporter(t *testing.T) []*target {
	svc := svcObj("demo", "serve")
	exp := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-exp", ResourceVersion: "3", CreationTimestamp: metav1.Now()}}
	port, proto, ready := int32(80), corev1.ProtocolTCP, true
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve-abc", UID: "u-slice", ResourceVersion: "4",
		Labels: map[string]string{discoveryv1.LabelServiceName: "serve"}}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr("http"), Port: &port, Protocol: &proto}}}
	return []*target{
		readMember(t, "m1", corev1.NamespaceActive, svc, exp, slice),
		readMember(t, "m2", corev1.NamespaceActive),
		readMember(t, "m3", corev1.NamespaceActive),
	}
}

func TestPipelinesDoNotWaitForTheSlowestCluster(t *testing.T) {
	const slow = 150 * time.Millisecond
	var mu sync.Mutex
	var log []write
	clusters := oneExporter(t)
	for _, c := range clusters {
		delay := time.Duration(0)
		if c.ID() == "m3" {
			delay = slow
		}
		c.Dynamic = fakeAPIServer(c.ID(), delay, &mu, &log, map[string]map[string]any{}, nil)
	}
	r := testReconciler(nil, clusters...)
	if err := r.syncKey(context.Background(), key{Namespace: "demo", Name: "serve"}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	var m2Last, m3First time.Time
	perCluster := map[string][]string{}
	var statuses []write
	for _, w := range log {
		perCluster[w.cluster] = append(perCluster[w.cluster], w.resource+"/"+w.sub)
		switch {
		case w.cluster == "m2":
			m2Last = w.done
		case w.cluster == "m3" && m3First.IsZero():
			m3First = w.done
		}
		if w.resource == "serviceexports" {
			statuses = append(statuses, w)
		}
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if fmt.Sprint(perCluster[id][:4]) != "[serviceimports/ serviceimports/status services/ endpointslices/]" {
			t.Errorf("%s: writes %v, want import, its status, derived Service, slice first", id, perCluster[id])
		}
	}
	if !m2Last.Before(m3First) {
		t.Errorf("m2 finished its writes %v after m3's first one: it waited for the slow cluster", m2Last.Sub(m3First))
	}
	if len(statuses) != 1 {
		t.Fatalf("%d writes of the export's status, want 1", len(statuses))
	}
	conds, _, _ := unstructured.NestedSlice(statuses[0].body, "status", "conditions")
	found := false
	for _, c := range conds {
		c := c.(map[string]any)
		if c["type"] == string(mcsv1beta1.ServiceExportConditionReady) {
			found = c["status"] == "True"
		}
	}
	if !found {
		t.Errorf("the export's only status write is not Ready: %v", conds)
	}
}

func ptr[T any](v T) *T { return &v }

// An endpoint change asks only a slice write in every cluster: it is decided once, the slices
// written by the clusters' pipelines, and decided once more to find nothing left; a pipeline does
// not decide the whole service again after its slices (that was one decision more per cluster).
func TestEndpointChangeIsDecidedTwice(t *testing.T) {
	var mu sync.Mutex
	var log []write
	clusters := oneExporter(t)
	for _, c := range clusters {
		c.Dynamic = fakeAPIServer(c.ID(), 0, &mu, &log, map[string]map[string]any{}, nil)
	}
	reg := prometheus.NewRegistry()
	r := testReconciler(NewMetrics(reg), clusters...)
	k := key{Namespace: "demo", Name: "serve"}
	if err := r.syncKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	// The provider's slice gains an address, as its cache would show it.
	var src *discoveryv1.EndpointSlice
	for _, s := range clusters[0].SlicesOf("demo", "serve") {
		if s.Name == "serve-abc" {
			src = s
		}
	}
	if src == nil {
		t.Fatal("m1 holds no source slice serve-abc")
	}
	src.Endpoints = append(src.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.0.6"}, Conditions: src.Endpoints[0].Conditions})
	src.ResourceVersion = "5"

	before := testutil.ToFloat64(r.opts.Metrics.Decisions)
	mu.Lock()
	log = nil
	mu.Unlock()
	if err := r.syncKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(r.opts.Metrics.Decisions) - before; n != 2 {
		t.Errorf("the endpoint change was decided %v times, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	got := map[string]int{}
	for _, w := range log {
		if w.resource != "endpointslices" {
			t.Errorf("%s: %s/%s written for an endpoint change", w.cluster, w.resource, w.name)
			continue
		}
		if eps, _, _ := unstructured.NestedSlice(w.body, "endpoints"); len(eps) != 2 {
			t.Errorf("%s: the copy was written with %d endpoints, want 2", w.cluster, len(eps))
		}
		got[w.cluster]++
	}
	if fmt.Sprint(got) != "map[m1:1 m2:1 m3:1]" {
		t.Errorf("slice writes per cluster %v, want one in each of m1, m2, m3", got)
	}
}
