package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func p[T any](v T) *T { return &v }

func digestSlice() *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-member1-abc", Namespace: "demo"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}, Hostname: p("web-0"), Zone: p("a"), Conditions: discoveryv1.EndpointConditions{Ready: p(true)}},
			{Addresses: []string{"10.0.0.2", "10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: p(false), Serving: p(true), Terminating: p(true)}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: p("http"), Port: p[int32](80), Protocol: p(corev1.ProtocolTCP)}, {Name: p("dns"), Port: p[int32](53), Protocol: p(corev1.ProtocolUDP)}},
	}
}

// Every field sync compares changes the digest; what the apiserver fills in as sync would have
// it (an unset protocol is TCP, an unset string is empty) and what sync does not compare do not.
func TestSliceDigest(t *testing.T) {
	base := SliceDigest(digestSlice())
	differ := map[string]func(s *discoveryv1.EndpointSlice){
		"address": func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "10.0.0.9" },
		"address moved": func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[1].Addresses = s.Endpoints[1].Addresses[:1]
			s.Endpoints[0].Addresses = append(s.Endpoints[0].Addresses, "10.0.0.3")
		},
		"endpoint order": func(s *discoveryv1.EndpointSlice) { s.Endpoints[0], s.Endpoints[1] = s.Endpoints[1], s.Endpoints[0] },
		"endpoint gone":  func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:1] },
		"hostname":       func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = p("web-1") },
		"zone":           func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Zone = nil },
		"ready unset":    func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = nil },
		"ready false":    func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = p(false) },
		"serving":        func(s *discoveryv1.EndpointSlice) { s.Endpoints[1].Conditions.Serving = p(false) },
		"terminating":    func(s *discoveryv1.EndpointSlice) { s.Endpoints[1].Conditions.Terminating = nil },
		"port number":    func(s *discoveryv1.EndpointSlice) { s.Ports[0].Port = p[int32](81) },
		"port unset":     func(s *discoveryv1.EndpointSlice) { s.Ports[0].Port = nil },
		"port name":      func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name = p("web") },
		"port protocol":  func(s *discoveryv1.EndpointSlice) { s.Ports[1].Protocol = p(corev1.ProtocolTCP) },
		"app protocol":   func(s *discoveryv1.EndpointSlice) { s.Ports[0].AppProtocol = p("h2") },
		"port order":     func(s *discoveryv1.EndpointSlice) { s.Ports[0], s.Ports[1] = s.Ports[1], s.Ports[0] },
		"no ports":       func(s *discoveryv1.EndpointSlice) { s.Ports = nil },
		"address type":   func(s *discoveryv1.EndpointSlice) { s.AddressType = discoveryv1.AddressTypeIPv6 },
		"words run on":   func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname, s.Endpoints[0].Zone = p("web-0a"), p("") },
		"no endpoints":   func(s *discoveryv1.EndpointSlice) { s.Endpoints = nil },
		"node name":      func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].NodeName = p("n1") },
		"target":         func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].TargetRef = &corev1.ObjectReference{Name: "web-0"} },
		"zone hint": func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "a"}}}
		},
		"node hint": func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForNodes: []discoveryv1.ForNode{{Name: "a"}}}
		},
		"an endpoint too": func(s *discoveryv1.EndpointSlice) { s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{}) },
	}
	same := map[string]func(s *discoveryv1.EndpointSlice){
		"protocol unset": func(s *discoveryv1.EndpointSlice) { s.Ports[0].Protocol = nil },
		"name empty":     func(s *discoveryv1.EndpointSlice) { s.Endpoints[1].Hostname = p("") },
		"empty hints": func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].NodeName = p("")
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{}
		},
		"metadata": func(s *discoveryv1.EndpointSlice) {
			s.Name, s.Labels, s.ResourceVersion = "other", map[string]string{"a": "b"}, "42"
		},
		"empty app protocol": func(s *discoveryv1.EndpointSlice) { s.Ports[1].AppProtocol = p("") },
	}
	for name, change := range differ {
		s := digestSlice()
		change(s)
		if SliceDigest(s) == base {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	for name, change := range same {
		s := digestSlice()
		change(s)
		if SliceDigest(s) != base {
			t.Errorf("%s: the digest changed", name)
		}
	}
	// Hints are told apart by zone, by order and from node hints.
	hinted := func(zones, nodes []string) string {
		s := digestSlice()
		h := &discoveryv1.EndpointHints{}
		for _, z := range zones {
			h.ForZones = append(h.ForZones, discoveryv1.ForZone{Name: z})
		}
		for _, n := range nodes {
			h.ForNodes = append(h.ForNodes, discoveryv1.ForNode{Name: n})
		}
		s.Endpoints[1].Hints = h
		return SliceDigest(s)
	}
	seen := map[string]string{}
	for name, d := range map[string]string{"a": hinted([]string{"a"}, nil), "b": hinted([]string{"b"}, nil), "a,b": hinted([]string{"a", "b"}, nil),
		"b,a": hinted([]string{"b", "a"}, nil), "ab": hinted([]string{"ab"}, nil), "node a": hinted(nil, []string{"a"})} {
		if other, dup := seen[d]; dup {
			t.Errorf("hints %s and %s digest alike", name, other)
		}
		seen[d] = name
	}
	s := digestSlice()
	ToDigest(s)
	if !Digested(s) || s.Endpoints != nil || s.Ports != nil || SliceDigest(s) != base || s.Name != "web-member1-abc" {
		t.Errorf("cached form: digested %v, %d endpoints, %d ports, digest %q, want %q", Digested(s), len(s.Endpoints), len(s.Ports), SliceDigest(s), base)
	}
	if Digested(digestSlice()) {
		t.Errorf("a whole slice taken for a digested one")
	}
}
