package dnszone

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

func ptr[T any](v T) *T { return &v }

func imp(name string, t mcsv1beta1.ServiceImportType, ips []string, ports ...mcsv1beta1.ServicePort) *mcsv1beta1.ServiceImport {
	return &mcsv1beta1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}},
		Spec:       mcsv1beta1.ServiceImportSpec{Type: t, IPs: ips, Ports: ports},
	}
}

func port(name string, proto corev1.Protocol, n int32) mcsv1beta1.ServicePort {
	return mcsv1beta1.ServicePort{Name: name, Protocol: proto, Port: n}
}

// ep is an endpoint: "web-0=10.11.0.1" has a hostname, "10.11.0.2" none, a trailing "!" is not
// ready.
func ep(s string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{}
	if a, ok := strings.CutSuffix(s, "!"); ok {
		s, e.Conditions.Ready = a, ptr(false)
	}
	if h, a, ok := strings.Cut(s, "="); ok {
		e.Hostname, s = ptr(h), a
	}
	e.Addresses = []string{s}
	return e
}

// slice is a copy sync made of cluster's slice of service, with port http/TCP 8080.
func slice(service, cluster string, family discoveryv1.AddressType, eps ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: service + "-" + cluster + "-" + string(family), Labels: map[string]string{
			mcsv1beta1.LabelServiceName: service, mcsv1beta1.LabelSourceCluster: cluster,
			names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue}},
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, ep(e))
	}
	return s
}

// fixture: serve (ClusterSetIP, dual-stack, a named and an unnamed port), web (Headless, member1
// and member2 each with a web-0, member1 with an endpoint without hostname and one not ready,
// member2 dual-stack), foreign (another controller's import), empty (no IP yet).
func fixture() *State {
	foreign := imp("foreign", mcsv1beta1.ClusterSetIP, []string{"10.96.0.20"}, port("http", "", 80))
	foreign.Labels = map[string]string{names.ManagedByLabel: "karmada"}
	notOurs := slice("web", "member9", discoveryv1.AddressTypeIPv4, "10.99.0.1")
	delete(notOurs.Labels, names.EndpointSliceManagedByLabel)
	return NewState(
		[]*mcsv1beta1.ServiceImport{
			imp("serve", mcsv1beta1.ClusterSetIP, []string{"10.96.0.10", "fd00::10"}, port("http", corev1.ProtocolTCP, 80), port("", corev1.ProtocolTCP, 8443)),
			imp("web", mcsv1beta1.Headless, nil, port("http", corev1.ProtocolTCP, 80)),
			foreign,
			imp("empty", mcsv1beta1.ClusterSetIP, nil, port("http", corev1.ProtocolTCP, 80)),
		},
		[]*discoveryv1.EndpointSlice{
			slice("web", "member1", discoveryv1.AddressTypeIPv4, "web-0=10.11.0.1", "10.11.0.2", "10.11.0.3!"),
			slice("web", "member2", discoveryv1.AddressTypeIPv4, "web-0=10.12.0.1"),
			slice("web", "member2", discoveryv1.AddressTypeIPv6, "web-0=fd00:12::1"),
			notOurs,
		})
}

func ask(t *testing.T, src Source, cfg Config, name string, qtype uint16) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	r := Answer(q, src, cfg)
	if r.Id != q.Id || !r.Response || len(r.Question) != 1 || r.Question[0] != q.Question[0] {
		t.Fatalf("%s: reply header %+v does not match the question", name, r.MsgHdr)
	}
	if _, err := r.Pack(); err != nil {
		t.Fatalf("%s: reply does not pack: %v", name, err)
	}
	return r
}

// text is a record without its owner, class and TTL: "A 10.96.0.10", "SRV 0 100 80 target.".
func text(rr dns.RR) string {
	h := rr.Header()
	return dns.TypeToString[h.Rrtype] + " " + strings.TrimPrefix(rr.String(), h.String())
}

func texts(rrs []dns.RR) []string {
	out := []string{}
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT {
			out = append(out, text(rr))
		}
	}
	return out
}

const z = ".demo.svc.clusterset.local."

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func TestAnswers(t *testing.T) {
	src := fixture()
	for _, tc := range []struct {
		name  string
		qtype uint16
		want  []string // the answer section; nil: a negative answer
		extra []string
	}{
		{"serve" + z, dns.TypeA, []string{"A 10.96.0.10"}, nil},
		{"serve" + z, dns.TypeAAAA, []string{"AAAA fd00::10"}, nil},
		{"serve" + z, dns.TypeSRV, []string{"SRV 0 100 80 serve" + z, "SRV 0 100 8443 serve" + z}, []string{"A 10.96.0.10", "AAAA fd00::10"}},
		{"_http._tcp.serve" + z, dns.TypeSRV, []string{"SRV 0 100 80 serve" + z}, []string{"A 10.96.0.10", "AAAA fd00::10"}},
		{"serve" + z, dns.TypeANY, []string{"A 10.96.0.10", "AAAA fd00::10", "SRV 0 100 80 serve" + z, "SRV 0 100 8443 serve" + z}, []string{"A 10.96.0.10", "AAAA fd00::10"}},
		{"web" + z, dns.TypeA, []string{"A 10.11.0.1", "A 10.11.0.2", "A 10.12.0.1"}, nil},
		{"web" + z, dns.TypeAAAA, []string{"AAAA fd00:12::1"}, nil},
		{"_http._tcp.web" + z, dns.TypeSRV,
			[]string{"SRV 0 100 8080 10-11-0-2.member1.web" + z, "SRV 0 100 8080 web-0.member1.web" + z, "SRV 0 100 8080 web-0.member2.web" + z},
			[]string{"A 10.11.0.1", "A 10.11.0.2", "A 10.12.0.1", "AAAA fd00:12::1"}},
		{"web" + z, dns.TypeSRV,
			[]string{"SRV 0 100 8080 10-11-0-2.member1.web" + z, "SRV 0 100 8080 web-0.member1.web" + z, "SRV 0 100 8080 web-0.member2.web" + z},
			[]string{"A 10.11.0.1", "A 10.11.0.2", "A 10.12.0.1", "AAAA fd00:12::1"}},
		// Per-endpoint names: one cluster's web-0 only.
		{"web-0.member1.web" + z, dns.TypeA, []string{"A 10.11.0.1"}, nil},
		{"web-0.member2.web" + z, dns.TypeA, []string{"A 10.12.0.1"}, nil},
		{"WEB-0.Member2.web" + z, dns.TypeAAAA, []string{"AAAA fd00:12::1"}, nil},
		{"web-0.member2.web" + z, dns.TypeANY, []string{"A 10.12.0.1", "AAAA fd00:12::1"}, nil},
		{"10-11-0-2.member1.web" + z, dns.TypeA, []string{"A 10.11.0.2"}, nil},
		{"foreign" + z, dns.TypeA, []string{"A 10.96.0.20"}, nil},
		{"clusterset.local.", dns.TypeSOA, []string{"SOA ns.dns.clusterset.local. hostmaster.clusterset.local. 1 7200 1800 86400 5"}, nil},
	} {
		t.Run(dns.TypeToString[tc.qtype]+" "+tc.name, func(t *testing.T) {
			r := ask(t, src, Config{Domain: "clusterset.local"}, tc.name, tc.qtype)
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Ns) != 0 {
				t.Fatalf("rcode %s, aa %v, authority %v", dns.RcodeToString[r.Rcode], r.Authoritative, r.Ns)
			}
			if got := texts(r.Answer); !slices.Equal(got, tc.want) {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
			for _, rr := range r.Answer {
				if rr.Header().Name != tc.name || rr.Header().Ttl != DefaultTTL {
					t.Errorf("%s: owner or TTL is not the question's name and 5s", rr)
				}
			}
			if got := texts(r.Extra); len(got) != len(tc.extra) || (len(got) > 0 && !slices.Equal(sorted(got), tc.extra)) {
				t.Errorf("additional %q, want %q", got, tc.extra)
			}
			targets := map[string]bool{}
			for _, rr := range r.Answer {
				if s, ok := rr.(*dns.SRV); ok {
					targets[s.Target] = true
				}
			}
			for _, rr := range r.Extra {
				if !targets[rr.Header().Name] {
					t.Errorf("additional %s is not an SRV target", rr)
				}
			}
		})
	}
}

func TestNegativeAnswers(t *testing.T) {
	src := fixture()
	for _, tc := range []struct {
		name  string
		qtype uint16
		rcode int
	}{
		// The name exists: NODATA.
		{"serve" + z, dns.TypeTXT, dns.RcodeSuccess},
		{"serve" + z, dns.TypeSOA, dns.RcodeSuccess},
		{"_http._tcp.serve" + z, dns.TypeA, dns.RcodeSuccess},
		{"_tcp.serve" + z, dns.TypeSRV, dns.RcodeSuccess},
		{"empty" + z, dns.TypeA, dns.RcodeSuccess},
		{"web-0.member1.web" + z, dns.TypeAAAA, dns.RcodeSuccess},
		{"web-0.member1.web" + z, dns.TypeSRV, dns.RcodeSuccess},
		{"member1.web" + z, dns.TypeA, dns.RcodeSuccess},
		{"demo.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess},
		{"svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess},
		{"clusterset.local.", dns.TypeA, dns.RcodeSuccess},
		{"clusterset.local.", dns.TypeNS, dns.RcodeSuccess},
		// It does not: NXDOMAIN.
		{"nope" + z, dns.TypeA, dns.RcodeNameError},
		{"serve.other.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError},
		{"other.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError},
		{"_nope._tcp.serve" + z, dns.TypeSRV, dns.RcodeNameError},
		{"_http._udp.serve" + z, dns.TypeSRV, dns.RcodeNameError},
		{"_http.tcp.serve" + z, dns.TypeSRV, dns.RcodeNameError},
		{"_sctp.serve" + z, dns.TypeSRV, dns.RcodeNameError},
		{"10-11-0-3.member1.web" + z, dns.TypeA, dns.RcodeNameError}, // not ready
		{"web-0.member3.web" + z, dns.TypeA, dns.RcodeNameError},
		{"web-9.member1.web" + z, dns.TypeA, dns.RcodeNameError},
		{"10-99-0-1.member9.web" + z, dns.TypeA, dns.RcodeNameError}, // not a slice of ours
		{"member9.web" + z, dns.TypeA, dns.RcodeNameError},
		{"web-0.member1.serve" + z, dns.TypeA, dns.RcodeNameError}, // ClusterSetIP: no endpoint names
		{"a.web-0.member1.web" + z, dns.TypeA, dns.RcodeNameError},
		{"foo.clusterset.local.", dns.TypeA, dns.RcodeNameError},
		{"a.b.c.d.clusterset.local.", dns.TypeA, dns.RcodeNameError},
	} {
		t.Run(dns.TypeToString[tc.qtype]+" "+tc.name, func(t *testing.T) {
			r := ask(t, src, Config{Domain: "clusterset.local."}, tc.name, tc.qtype)
			if r.Rcode != tc.rcode || !r.Authoritative || len(r.Answer) != 0 {
				t.Fatalf("rcode %s aa %v answer %v, want %s and no answer", dns.RcodeToString[r.Rcode], r.Authoritative, r.Answer, dns.RcodeToString[tc.rcode])
			}
			if len(r.Ns) != 1 || r.Ns[0].Header().Name != "clusterset.local." || r.Ns[0].(*dns.SOA).Minttl != DefaultTTL {
				t.Errorf("authority %v: want the zone's SOA", r.Ns)
			}
		})
	}
}

func TestRefusedAndMalformed(t *testing.T) {
	src := fixture()
	for _, name := range []string{"example.com.", "serve.demo.svc.cluster.local.", "local.", "."} {
		if r := ask(t, src, Config{Domain: "clusterset.local"}, name, dns.TypeA); r.Rcode != dns.RcodeRefused || r.Authoritative || len(r.Answer)+len(r.Ns) != 0 {
			t.Errorf("%s: %s aa=%v, want REFUSED", name, dns.RcodeToString[r.Rcode], r.Authoritative)
		}
	}
	q := new(dns.Msg)
	q.SetQuestion("serve"+z, dns.TypeA)
	q.Question[0].Qclass = dns.ClassCHAOS
	if r := Answer(q, src, Config{Domain: "clusterset.local"}); r.Rcode != dns.RcodeRefused {
		t.Errorf("class CH: %s", dns.RcodeToString[r.Rcode])
	}
	q.Question = append(q.Question, q.Question[0])
	if r := Answer(q, src, Config{Domain: "clusterset.local"}); r.Rcode != dns.RcodeFormatError {
		t.Errorf("two questions: %s", dns.RcodeToString[r.Rcode])
	}
	q = new(dns.Msg)
	q.SetNotify("clusterset.local.")
	if r := Answer(q, src, Config{Domain: "clusterset.local"}); r.Rcode != dns.RcodeNotImplemented {
		t.Errorf("NOTIFY: %s", dns.RcodeToString[r.Rcode])
	}
}

func TestConfig(t *testing.T) {
	r := ask(t, fixture(), Config{Domain: "MCS.Example", TTL: 30}, "_http._tcp.serve.demo.svc.mcs.example.", dns.TypeSRV)
	if got := texts(r.Answer); !slices.Equal(got, []string{"SRV 0 100 80 serve.demo.svc.mcs.example."}) || r.Answer[0].Header().Ttl != 30 || r.Extra[0].Header().Ttl != 30 {
		t.Errorf("another zone and TTL: %v %v", r.Answer, r.Extra)
	}
	if r := ask(t, fixture(), Config{Domain: "mcs.example"}, "serve"+z, dns.TypeA); r.Rcode != dns.RcodeRefused {
		t.Errorf("clusterset.local outside the zone mcs.example: %s", dns.RcodeToString[r.Rcode])
	}
	q := new(dns.Msg)
	q.SetQuestion("serve"+z, dns.TypeA)
	q.SetEdns0(4096, false)
	if o := Answer(q, fixture(), Config{Domain: "clusterset.local"}).IsEdns0(); o == nil || o.UDPSize() != UDPSize {
		t.Errorf("EDNS0 is answered with EDNS0 advertising %d bytes: %v", UDPSize, o)
	}
}

// A service exported by many clusters answers every one, sorted, each name once.
func TestManyEndpointsSortedAndUnique(t *testing.T) {
	var sl []*discoveryv1.EndpointSlice
	for c := 9; c >= 1; c-- {
		cl := fmt.Sprintf("member%d", c)
		sl = append(sl, slice("web", cl, discoveryv1.AddressTypeIPv4, fmt.Sprintf("web-0=10.1%d.0.1", c)),
			slice("web", cl, discoveryv1.AddressTypeIPv4, fmt.Sprintf("web-0=10.1%d.0.1", c))) // the same twice
	}
	src := NewState([]*mcsv1beta1.ServiceImport{imp("web", mcsv1beta1.Headless, nil, port("http", corev1.ProtocolTCP, 80))}, sl)
	r := ask(t, src, Config{Domain: "clusterset.local"}, "web"+z, dns.TypeSRV)
	if len(r.Answer) != 9 || len(r.Extra) != 9 || !slices.IsSorted(texts(r.Answer)) {
		t.Fatalf("answer %v\nextra %v", texts(r.Answer), texts(r.Extra))
	}
	again := ask(t, src, Config{Domain: "clusterset.local"}, "web"+z, dns.TypeSRV)
	if fmt.Sprint(again.Answer, again.Extra) != fmt.Sprint(r.Answer, r.Extra) {
		t.Error("the same state and question must give the same answer")
	}
}

// dedupe orders records as their whole text would, without formatting it.
func TestDedupeOrdersAsText(t *testing.T) {
	r := ask(t, fixture(), Config{Domain: "clusterset.local"}, "web"+z, dns.TypeANY)
	rrs := append(append([]dns.RR{}, r.Answer...), r.Extra...)
	rrs = append(rrs, rrs[0], &dns.A{Hdr: dns.RR_Header{Name: "web-10.member1.web" + z, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: DefaultTTL}, A: []byte{10, 9, 0, 1}},
		&dns.AAAA{Hdr: dns.RR_Header{Name: "web-0.member2.web" + z, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: DefaultTTL}, AAAA: net.ParseIP("fd00:12::10")})
	var got, want []string
	for _, rr := range dedupe(rrs) {
		got = append(got, rr.String())
	}
	for _, rr := range rrs {
		if !slices.Contains(want, rr.String()) {
			want = append(want, rr.String())
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
