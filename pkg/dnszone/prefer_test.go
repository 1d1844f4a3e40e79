package dnszone

import (
	"slices"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// hinted gives every endpoint of s the zone hints zones, as sync does in a member that prefers
// its own endpoints.
func hinted(s *discoveryv1.EndpointSlice, zones ...string) *discoveryv1.EndpointSlice {
	for i := range s.Endpoints {
		h := &discoveryv1.EndpointHints{}
		for _, z := range zones {
			h.ForZones = append(h.ForZones, discoveryv1.ForZone{Name: z})
		}
		s.Endpoints[i].Hints = h
	}
	return s
}

// TestPreferSameCluster: the copies a member holds in, the addresses NAME answers out. In member2,
// which prefers its own endpoints, sync hints them for its zones and member1's for
// OtherClusterZone.
func TestPreferSameCluster(t *testing.T) {
	const other = names.OtherClusterZone
	v4, v6 := discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6
	for _, tc := range []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		a      []string // A and AAAA answers of web.demo.svc
	}{
		{"no hints: every cluster's", []*discoveryv1.EndpointSlice{
			slice("web", "member1", v4, "10.11.0.1", "10.11.0.2"),
			slice("web", "member2", v4, "10.12.0.1")},
			[]string{"A 10.11.0.1", "A 10.11.0.2", "A 10.12.0.1"}},
		{"own hinted, others' OtherClusterZone: own only", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1", "10.11.0.2"), other),
			hinted(slice("web", "member2", v4, "10.12.0.1"), "zone-a", "zone-b")},
			[]string{"A 10.12.0.1"}},
		{"dual-stack: own of both families", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other),
			hinted(slice("web", "member1", v6, "fd00:11::1"), other),
			hinted(slice("web", "member2", v4, "web-0=10.12.0.1"), "zone-a"),
			hinted(slice("web", "member2", v6, "web-0=fd00:12::1"), "zone-a")},
			[]string{"A 10.12.0.1", "AAAA fd00:12::1"}},
		{"own not ready: every ready one", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1", "10.11.0.2"), other),
			hinted(slice("web", "member2", v4, "10.12.0.1!"), "zone-a")},
			[]string{"A 10.11.0.1", "A 10.11.0.2"}},
		{"own scaled to none: every one", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other),
			slice("web", "member2", v4)},
			[]string{"A 10.11.0.1"}},
		{"some own ready: those", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other),
			hinted(slice("web", "member2", v4, "10.12.0.1!", "10.12.0.2"), "zone-a")},
			[]string{"A 10.12.0.2"}},
		{"a ready endpoint without hints (a copy sync does not rewrite): every one", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other),
			slice("web", "member3", v4, "10.13.0.1"),
			hinted(slice("web", "member2", v4, "10.12.0.1"), "zone-a")},
			[]string{"A 10.11.0.1", "A 10.12.0.1", "A 10.13.0.1"}},
		{"one not ready without hints counts for nothing", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other),
			slice("web", "member3", v4, "10.13.0.1!"),
			hinted(slice("web", "member2", v4, "10.12.0.1"), "zone-a")},
			[]string{"A 10.12.0.1"}},
		{"empty hints are none", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1")),
			hinted(slice("web", "member2", v4, "10.12.0.1"), "zone-a")},
			[]string{"A 10.11.0.1", "A 10.12.0.1"}},
		{"a zone besides OtherClusterZone is the member's own", []*discoveryv1.EndpointSlice{
			hinted(slice("web", "member1", v4, "10.11.0.1"), other, "zone-a"),
			hinted(slice("web", "member2", v4, "10.12.0.1"), other)},
			[]string{"A 10.11.0.1"}},
		{"another controller's slice is not read", []*discoveryv1.EndpointSlice{
			func() *discoveryv1.EndpointSlice {
				s := hinted(slice("web", "member9", v4, "10.19.0.1"), "zone-a")
				delete(s.Labels, names.EndpointSliceManagedByLabel)
				return s
			}(),
			hinted(slice("web", "member1", v4, "10.11.0.1"), other)},
			[]string{"A 10.11.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := NewState([]*mcsv1beta1.ServiceImport{imp("web", mcsv1beta1.Headless, nil, port("http", corev1.ProtocolTCP, 80))}, tc.slices)
			var got []string
			for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
				got = append(got, texts(ask(t, src, Config{Domain: "clusterset.local"}, "web"+z, qt).Answer)...)
			}
			if !slices.Equal(got, tc.a) {
				t.Errorf("A, AAAA: %q, want %q", got, tc.a)
			}
		})
	}
}

// The service's SRV records follow its addresses; every endpoint keeps its own name.
func TestPreferSameClusterNames(t *testing.T) {
	src := NewState([]*mcsv1beta1.ServiceImport{imp("web", mcsv1beta1.Headless, nil, port("http", corev1.ProtocolTCP, 80))}, []*discoveryv1.EndpointSlice{
		hinted(slice("web", "member1", discoveryv1.AddressTypeIPv4, "web-0=10.11.0.1"), names.OtherClusterZone),
		hinted(slice("web", "member2", discoveryv1.AddressTypeIPv4, "web-0=10.12.0.1"), "zone-a")})
	for _, tc := range []struct {
		name  string
		qtype uint16
		want  []string
	}{
		{"web" + z, dns.TypeSRV, []string{"SRV 0 100 8080 web-0.member2.web" + z}},
		{"_http._tcp.web" + z, dns.TypeSRV, []string{"SRV 0 100 8080 web-0.member2.web" + z}},
		{"web" + z, dns.TypeANY, []string{"A 10.12.0.1", "SRV 0 100 8080 web-0.member2.web" + z}},
		{"web-0.member1.web" + z, dns.TypeA, []string{"A 10.11.0.1"}},
		{"web-0.member2.web" + z, dns.TypeA, []string{"A 10.12.0.1"}},
	} {
		r := ask(t, src, Config{Domain: "clusterset.local"}, tc.name, tc.qtype)
		if got := texts(r.Answer); r.Rcode != dns.RcodeSuccess || !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %s %q, want %q", dns.TypeToString[tc.qtype], tc.name, dns.RcodeToString[r.Rcode], got, tc.want)
		}
	}
	if r := ask(t, src, Config{Domain: "clusterset.local"}, "member1.web"+z, dns.TypeA); r.Rcode != dns.RcodeSuccess {
		t.Errorf("member1.web: %s, want NOERROR (it exists)", dns.RcodeToString[r.Rcode])
	}
}
