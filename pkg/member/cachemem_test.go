package member

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// The clusterset of `make bench-scale`, as one member's informers receive it: every service
// exported from the first two of five clusters, one selectorless Service and one two-endpoint
// slice in each exporter, imported by every cluster (import, derived Service, a copy of each
// exporter's slice). Objects carry what the apiserver adds (uid, resourceVersion, managedFields
// with their field sets).

const benchNS = "bench"

var benchTime = metav1.NewTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))

func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, sub string, set any) metav1.ManagedFieldsEntry {
	raw, _ := json.Marshal(set)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Time: &benchTime,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: sub}
}

func objMeta(name string, labels map[string]string, mf ...metav1.ManagedFieldsEntry) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: benchNS, UID: uuid.NewUUID(), ResourceVersion: fmt.Sprint(100000 + len(name)*7919),
		CreationTimestamp: benchTime, Labels: labels, ManagedFields: mf}
}

func labelSet(l map[string]string) map[string]any {
	out := map[string]any{}
	for k := range l {
		out["f:"+k] = map[string]any{}
	}
	return out
}

func benchService(name string, derived bool) *corev1.Service {
	s := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.1.1", ClusterIPs: []string{"10.96.1.1"},
		Ports:           []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack), InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster)}}
	spec := map[string]any{"f:internalTrafficPolicy": map[string]any{}, "f:ports": map[string]any{`k:{"port":80,"protocol":"TCP"}`: map[string]any{
		".": map[string]any{}, "f:name": map[string]any{}, "f:port": map[string]any{}, "f:protocol": map[string]any{}, "f:targetPort": map[string]any{}}},
		"f:sessionAffinity": map[string]any{}, "f:type": map[string]any{}}
	if !derived {
		s.ObjectMeta = objMeta(name, nil, entry("bench", metav1.ManagedFieldsOperationUpdate, "v1", "", map[string]any{"f:spec": spec}))
		return s
	}
	l := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: name}
	s.ObjectMeta = objMeta(names.DerivedServiceName(name), l, entry(names.FieldManager, metav1.ManagedFieldsOperationApply, "v1", "",
		map[string]any{"f:metadata": map[string]any{"f:labels": labelSet(l), "f:ownerReferences": map[string]any{`k:{"uid":"x"}`: map[string]any{}}}, "f:spec": spec}))
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "multicluster.x-k8s.io/v1beta1", Kind: "ServiceImport", Name: name, UID: uuid.NewUUID(), Controller: ptr.To(true)}}
	return s
}

func benchSlice(name, source string, ips []string, copyOf string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	for i, ip := range ips {
		e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)}}
		if copyOf == "" && podTargets {
			// As the EndpointSlice controller writes them for a Deployment's pods.
			e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: benchNS, Name: fmt.Sprintf("%s-7d9f8c6b5d-%05d", name, i), UID: uuid.NewUUID()}
			e.NodeName, e.Zone = ptr.To("node-1"), ptr.To("zone-a")
		}
		s.Endpoints = append(s.Endpoints, e)
	}
	body := map[string]any{"f:addressType": map[string]any{}, "f:endpoints": map[string]any{}, "f:ports": map[string]any{}}
	if copyOf == "" {
		l := map[string]string{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "bench.kubectl-mcs.io"}
		body["f:metadata"] = map[string]any{"f:labels": labelSet(l)}
		s.ObjectMeta = objMeta(name+"-src", l, entry("bench", metav1.ManagedFieldsOperationUpdate, "discovery.k8s.io/v1", "", body))
		return s
	}
	l := map[string]string{mcsv1beta1.LabelServiceName: copyOf, mcsv1beta1.LabelSourceCluster: source, discoveryv1.LabelServiceName: names.DerivedServiceName(copyOf),
		names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, names.ManagedByLabel: names.ManagedByValue}
	body["f:metadata"] = map[string]any{"f:labels": labelSet(l), "f:ownerReferences": map[string]any{`k:{"uid":"x"}`: map[string]any{}}}
	s.ObjectMeta = objMeta(names.EndpointSliceName(copyOf, source, name), l, entry(names.FieldManager, metav1.ManagedFieldsOperationUpdate, "discovery.k8s.io/v1", "", body))
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: names.DerivedServiceName(copyOf), UID: uuid.NewUUID(),
		Controller: ptr.To(true)}}
	return s
}

// benchMCS is an export or import as the dynamic informer receives it: decoded from JSON.
func benchMCS(kind, name string, clusters []string) *unstructured.Unstructured {
	var obj any
	status := map[string]any{"f:status": map[string]any{"f:conditions": map[string]any{}}}
	if kind == mcsv1beta1.ServiceExportKindName {
		e := &mcsv1beta1.ServiceExport{ObjectMeta: objMeta(name, nil, entry("bench", metav1.ManagedFieldsOperationUpdate, "multicluster.x-k8s.io/v1beta1", "", map[string]any{}),
			entry(names.FieldManager, metav1.ManagedFieldsOperationApply, "multicluster.x-k8s.io/v1beta1", "status", status))}
		for _, t := range []string{"Valid", "Ready", "Conflict"} {
			e.Status.Conditions = append(e.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: benchTime, Reason: t + "Reason", Message: "the service " + name + " is " + t})
		}
		obj = e
	} else {
		l := map[string]string{names.ManagedByLabel: names.ManagedByValue}
		i := &mcsv1beta1.ServiceImport{ObjectMeta: objMeta(name, l, entry(names.FieldManager, metav1.ManagedFieldsOperationApply, "multicluster.x-k8s.io/v1beta1", "",
			map[string]any{"f:metadata": map[string]any{"f:labels": labelSet(l), "f:annotations": map[string]any{"f:" + names.DerivedServiceAnnotation: map[string]any{}}}, "f:spec": map[string]any{"f:ports": map[string]any{}, "f:type": map[string]any{}}}),
			entry(names.FieldManager, metav1.ManagedFieldsOperationApply, "multicluster.x-k8s.io/v1beta1", "status", map[string]any{"f:status": map[string]any{"f:clusters": map[string]any{}}}))}
		i.Annotations = map[string]string{names.DerivedServiceAnnotation: names.DerivedServiceName(name)}
		i.Spec = mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, IPs: []string{"10.96.2.2"}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []mcsv1beta1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}, SessionAffinity: corev1.ServiceAffinityNone}
		for _, c := range clusters {
			i.Status.Clusters = append(i.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
		obj = i
	}
	raw, _ := json.Marshal(obj)
	u := &unstructured.Unstructured{}
	_ = u.UnmarshalJSON(raw)
	u.SetAPIVersion("multicluster.x-k8s.io/v1beta1")
	u.SetKind(kind)
	return u
}

// podTargets gives source endpoints the target, node and zone the EndpointSlice controller sets
// (bench-scale's slices, written by the benchmark, have none).
var podTargets = false

// benchObjects is what member c of clusters holds of services, perSlice endpoints in each slice.
func benchObjects(c int, clusters []string, services, perSlice int) (objs map[string][]any, endpoints int) {
	objs = map[string][]any{}
	add := func(kind string, o any) { objs[kind] = append(objs[kind], o) }
	ip := func(e, i, k int) string { return fmt.Sprintf("10.%d.%d.%d", 100+e, (i*2+k)/250, (i*2+k)%250+1) }
	for i := 0; i < services; i++ {
		name := fmt.Sprintf("svc-%05d", i)
		for e := 0; e < 2; e++ {
			var ips []string
			for k := 0; k < perSlice; k++ {
				ips = append(ips, ip(e, i*perSlice/2, k))
			}
			if e == c {
				add(snapshot.KindService, benchService(name, false))
				add(snapshot.KindEndpointSlice, benchSlice(name, "", ips, ""))
				add(snapshot.KindServiceExport, benchMCS(mcsv1beta1.ServiceExportKindName, name, nil))
				endpoints += perSlice
			}
			add(snapshot.KindEndpointSlice, benchSlice(name+"-src", clusters[e], ips, name))
			endpoints += perSlice
		}
		add(snapshot.KindService, benchService(name, true))
		add(snapshot.KindServiceImport, benchMCS(mcsv1beta1.ServiceImportKindName, name, clusters[:2]))
	}
	add(snapshot.KindNamespace, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS, UID: uuid.NewUUID()}})
	return objs, endpoints
}

// decoded is o as an informer decodes it from the wire (protobuf for the built-in kinds), so that
// every string is an allocation of its own, as in the real caches.
func decoded(t testing.TB, o any) any {
	type proto interface {
		Marshal() ([]byte, error)
		Unmarshal([]byte) error
	}
	p, ok := o.(proto)
	if !ok {
		return o // unstructured: decoded from JSON already
	}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var out proto
	switch o.(type) {
	case *corev1.Service:
		out = &corev1.Service{}
	case *discoveryv1.EndpointSlice:
		out = &discoveryv1.EndpointSlice{}
	case *corev1.Namespace:
		out = &corev1.Namespace{}
	}
	if err := out.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	return out
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// fillCaches fills one member's stores (the indexers of Cache.start) with its objects of the
// bench clusterset, each through the informer's transform.
func fillCaches(t testing.TB, c int, clusters []string, services, perSlice int) ([]cache.Indexer, int) {
	objs, endpoints := benchObjects(c, clusters, services, perSlice)
	tf := transforms(names.FieldManager)
	var stores []cache.Indexer
	for kind, l := range objs {
		idx := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		if kind == snapshot.KindEndpointSlice {
			idx[sliceIndex] = sliceKeys
		}
		store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, idx)
		for i, o := range l {
			obj, err := tf[kind](decoded(t, o))
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Add(obj); err != nil {
				t.Fatal(err)
			}
			l[i] = nil
		}
		stores = append(stores, store)
	}
	return stores, endpoints
}

// BenchmarkCachedBytesPerEndpoint reports the heap the caches of five members hold per cached
// endpoint (every endpoint of every slice in every member, sources and copies, as bench-scale
// counts them), live after a GC.
func BenchmarkCachedBytesPerEndpoint(b *testing.B) {
	clusters := []string{"member1", "member2", "member3", "member4", "member5"}
	const services = 1000
	for b.Loop() {
		before := heapInUse()
		var all [][]cache.Indexer
		endpoints := 0
		for c := range clusters {
			s, n := fillCaches(b, c, clusters, services, 2)
			all = append(all, s)
			endpoints += n
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/float64(endpoints), "B/endpoint")
		runtime.KeepAlive(all)
	}
}
