package member

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// The running sums follow adds, updates and deletes (a tombstone's included) to zero.
func TestCachedSums(t *testing.T) {
	type sum struct{ objects, bytes int }
	got := map[string]*sum{}
	m := &Cache{Connection: &clusterset.Connection{Ref: clusterset.Ref{ID: "member1"}}, ref: clusterset.Ref{ID: "member1"}, cfg: Config{Cached: func(cluster, kind string, objects, bytes int) {
		k := cluster + "/" + kind
		if got[k] == nil {
			got[k] = &sum{}
		}
		got[k].objects += objects
		got[k].bytes += bytes
	}}}
	mk := func(name string, ips ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, AddressType: discoveryv1.AddressTypeIPv4}
		for _, ip := range ips {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
		}
		return s
	}
	a, b := mk("a", "10.0.0.1"), mk("b", "10.0.0.2")
	a2 := mk("a", "10.0.0.1", "10.0.0.3")
	h := m.handler(snapshot.KindEndpointSlice)
	h.OnAdd(a, false)
	h.OnAdd(b, false)
	h.OnUpdate(a, a2)
	if s := got["member1/EndpointSlice"]; s == nil || *s != (sum{2, a2.Size() + b.Size()}) {
		t.Fatalf("after two adds and an update: %+v, want {2 %d}", s, a2.Size()+b.Size())
	}
	h.OnDelete(a2)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: b})
	if s := got["member1/EndpointSlice"]; *s != (sum{}) {
		t.Errorf("after deleting both: %+v, want zero", s)
	}

	// The mcs-api kinds have no protobuf: their JSON size.
	e := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	m.handler(snapshot.KindServiceExport).OnAdd(e, false)
	if s := got["member1/ServiceExport"]; s == nil || s.objects != 1 || s.bytes < len(`{"metadata":{"name":"web","namespace":"ns"}`) {
		t.Errorf("an export: %+v", s)
	}
}

// A relist's update of an object whose version did not change queues nothing; a new version does.
func TestUpdateOfSameVersionIsNotPassedOn(t *testing.T) {
	var seen []string
	m := &Cache{Connection: &clusterset.Connection{Ref: clusterset.Ref{ID: "member1"}}, ref: clusterset.Ref{ID: "member1"}, cfg: Config{Handlers: Handlers{
		Object: func(_ *Cache, kind string, svc types.NamespacedName, obj any, deleted bool) {
			seen = append(seen, obj.(metav1.Object).GetResourceVersion())
		}}}}
	at := func(rv string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: rv,
			Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
	}
	h := m.handler(snapshot.KindEndpointSlice)
	h.OnUpdate(at("5"), at("5"))
	h.OnUpdate(at("5"), at("6"))
	if len(seen) != 1 || seen[0] != "6" {
		t.Errorf("handled %v, want only the new version [6]", seen)
	}
}
