package install

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func slice(ns, name, service string, endpoints int, labels map[string]string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}}}
	for k, v := range labels {
		s.Labels[k] = v
	}
	for i := 0; i < endpoints; i++ {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}})
	}
	return s
}

func TestCount(t *testing.T) {
	om := func(ns, name string, managed bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: ns, Name: name}
		if managed {
			m.Labels = map[string]string{names.ManagedByLabel: names.ManagedByValue}
		}
		return m
	}
	ours := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "web", mcsv1beta1.LabelSourceCluster: "a"}
	// a exports web (two slices, 3 and 2 endpoints) and has db (4 endpoints), not exported; b
	// has the namespace and already holds what an earlier sync made (import, derived Service, a
	// copy); c lacks the namespace; d could not be read.
	clusters := []snapshot.Cluster{
		{ID: "a", State: snapshot.Reachable, Objects: snapshot.Objects{Namespaces: []string{"ns"},
			ServiceExports: []*mcsv1beta1.ServiceExport{{ObjectMeta: om("ns", "web", false)}},
			Services:       []*corev1.Service{{ObjectMeta: om("ns", "web", false)}, {ObjectMeta: om("ns", "db", false)}},
			EndpointSlices: []*discoveryv1.EndpointSlice{slice("ns", "web-1", "web", 3, nil), slice("ns", "web-2", "web", 2, nil), slice("ns", "db-1", "db", 4, nil)}}},
		{ID: "b", State: snapshot.Reachable, Objects: snapshot.Objects{Namespaces: []string{"ns", "other"},
			ServiceImports: []*mcsv1beta1.ServiceImport{{ObjectMeta: om("ns", "web", true)}},
			Services:       []*corev1.Service{{ObjectMeta: om("ns", "derived-web", true)}},
			EndpointSlices: []*discoveryv1.EndpointSlice{slice("ns", "web-a-web-1", "derived-web", 3, ours)}}},
		{ID: "c", State: snapshot.Reachable, Objects: snapshot.Objects{Namespaces: []string{"other"}}},
		{ID: "d", State: snapshot.Unreachable, Objects: snapshot.Objects{Namespaces: []string{"ns"}, Services: []*corev1.Service{{ObjectMeta: om("ns", "x", false)}}}},
	}
	got := Count(clusters, "")
	// Four members (d too: sync holds its clients). Now, without sync's: a 1+1+2+3, b 2, c 1 = 10
	// objects, 9 endpoints; then in a and b an import, a derived Service and two copies each: 8
	// objects, no endpoints (the caches hold a digest of a copy's).
	if want := (Footprint{Members: 4, Objects: 18, Records: 8, Endpoints: 9}); got != want {
		t.Errorf("Count = %+v, want %+v", got, want)
	}
	// b's own sync (--local): a's derived Service and copies are not cached, its import is; b's
	// own records as before: 10 + 1 (a) + 4 (b).
	if got, want := Count(clusters, "b"), (Footprint{Members: 4, Objects: 15, Records: 5, Endpoints: 9}); got != want {
		t.Errorf("Count for b's own sync = %+v, want %+v", got, want)
	}
	// Once installed, the members hold install's namespace: the same count, the same memory.
	for i := range clusters {
		clusters[i].Namespaces = append(clusters[i].Namespaces, DefaultNamespace)
	}
	if again := Count(clusters, ""); again != got {
		t.Errorf("Count with install's namespace = %+v, want %+v", again, got)
	}
}

func TestMemory(t *testing.T) {
	for _, c := range []struct {
		f            Footprint
		request, lim string
	}{
		{Footprint{}, "128Mi", "512Mi"}, // the minimums
		// bench-scale at 10,000 services on 5 clusters: 26 objects a service, and the 4 endpoints
		// of the two exporters' slices, 439,000,000 bytes (418.7 MiB) of caches.
		{Footprint{Objects: 26 * 10000, Endpoints: 4 * 10000}, "483Mi", "902Mi"},
		// The same with sync's own 20 of the 26 cached as records: 289,000,000 bytes (275.6 MiB).
		{Footprint{Objects: 26 * 10000, Records: 20 * 10000, Endpoints: 4 * 10000}, "340Mi", "616Mi"},
		// 1,000 objects and 100,000 endpoints: 25.4 MiB of caches, the minimums.
		{Footprint{Objects: 1000, Endpoints: 100000}, "128Mi", "512Mi"},
		// 100,000 objects and 1,000,000 endpoints: 415,000,000 bytes (395.8 MiB).
		{Footprint{Objects: 100000, Endpoints: 1000000}, "460Mi", "856Mi"},
		// The 10,000 services of five members: 1 MiB a member more.
		{Footprint{Members: 5, Objects: 26 * 10000, Records: 20 * 10000, Endpoints: 4 * 10000}, "345Mi", "626Mi"},
		// 255 members holding little: their clients, watches and informers are past the minimums.
		{Footprint{Members: 255}, "319Mi", "574Mi"},
	} {
		req, lim := c.f.Memory()
		if req.String() != c.request || lim.String() != c.lim {
			t.Errorf("%+v: request %s, limit %s; want %s, %s", c.f, req.String(), lim.String(), c.request, c.lim)
		}
	}
}

func TestParseMemory(t *testing.T) {
	rule := func() (resource.Quantity, resource.Quantity) {
		return resource.MustParse("300Mi"), resource.MustParse("600Mi")
	}
	noRule := func() (resource.Quantity, resource.Quantity) {
		t.Fatal("the rule was asked with both flags set")
		return rule()
	}
	for _, c := range []struct {
		request, limit string
		rule           func() (resource.Quantity, resource.Quantity)
		want           string // "request/limit", or the error's start
	}{
		{"", "", rule, "300Mi/600Mi"},
		{"1Gi", "2Gi", noRule, "1Gi/2Gi"},
		{"", "2Gi", rule, "300Mi/2Gi"},
		{"", "200Mi", rule, "200Mi/200Mi"}, // the rule's request lowered to the limit
		{"1Gi", "", rule, "1Gi/1Gi"},       // the rule's limit raised to the request
		{"100Mi", "", rule, "100Mi/600Mi"},
		{"2Gi", "1Gi", noRule, "--memory-request 2Gi is above --memory-limit 1Gi"},
		{"", "lots", rule, `--memory-limit "lots": `},
		{"0", "", rule, `--memory-request "0": must be greater than 0`},
	} {
		r, err := ParseMemory(c.request, c.limit, c.rule)
		got := r.Request.String() + "/" + r.Limit.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("ParseMemory(%q, %q) = %s, want %s", c.request, c.limit, got, c.want)
		}
	}
}

func TestDeploymentCarriesMemory(t *testing.T) {
	c := Config{Namespace: "ns", Image: "img", Members: []DeployedMember{{ID: "m1", Lease: true}},
		Memory: Resources{Request: resource.MustParse("700Mi"), Limit: resource.MustParse("1300Mi")}}
	ctr := Deployment(c).Spec.Template.Spec.Containers[0]
	if r, l := ctr.Resources.Requests[corev1.ResourceMemory], ctr.Resources.Limits[corev1.ResourceMemory]; r.String() != "700Mi" || l.String() != "1300Mi" {
		t.Errorf("memory request %s, limit %s; want 700Mi, 1300Mi", r.String(), l.String())
	}
	var env *corev1.EnvVar
	for i := range ctr.Env {
		if ctr.Env[i].Name == MemoryLimitEnv {
			env = &ctr.Env[i]
		}
	}
	if env == nil || env.ValueFrom == nil || env.ValueFrom.ResourceFieldRef == nil ||
		*env.ValueFrom.ResourceFieldRef != (corev1.ResourceFieldSelector{ContainerName: ctr.Name, Resource: "limits.memory"}) {
		t.Errorf("%s = %+v, want the container's limits.memory", MemoryLimitEnv, env)
	}
	c.Memory = Resources{}
	ctr = Deployment(c).Spec.Template.Spec.Containers[0]
	if r, l := ctr.Resources.Requests[corev1.ResourceMemory], ctr.Resources.Limits[corev1.ResourceMemory]; r.String() != "128Mi" || l.String() != "512Mi" {
		t.Errorf("no sizing: memory request %s, limit %s; want the minimums", r.String(), l.String())
	}
}
