package dnszone

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// picker draws choices from the fuzzer's bytes (zero once they run out).
type picker struct{ b []byte }

func (p *picker) n(max int) int {
	if len(p.b) == 0 || max <= 0 {
		return 0
	}
	v := int(p.b[0]) % max
	p.b = p.b[1:]
	return v
}

func pick[T any](p *picker, from ...T) T { return from[p.n(len(from))] }

var (
	fuzzNames    = []string{"web", "serve", "db", "x"}
	fuzzClusters = []string{"member1", "member2", "Member3", ""}
	fuzzHosts    = []string{"", "web-0", "db-1", "WEB-0"}
	fuzzAddrs    = []string{"10.11.0.1", "10.11.0.2", "fd00::1", "::ffff:10.1.1.1", "fe80::1%eth0", "not-an-ip", "", "10.12.0.1"}
	fuzzPorts    = []string{"", "http", "dns", "HTTP"}
	fuzzProtos   = []corev1.Protocol{"", corev1.ProtocolTCP, corev1.ProtocolUDP, "tcp"}
)

// fuzzState builds a member's state from bytes: imports of any type, ports and IPs (valid or not),
// slices of ours or not, with any endpoints, hinted or not.
func fuzzState(p *picker) *State {
	var imports []*mcsv1beta1.ServiceImport
	for range p.n(4) {
		t := pick(p, mcsv1beta1.ClusterSetIP, mcsv1beta1.Headless, "")
		var ips []string
		for range p.n(3) {
			ips = append(ips, pick(p, fuzzAddrs...))
		}
		i := imp(pick(p, fuzzNames...), t, ips)
		i.Namespace = pick(p, "demo", "other")
		for range p.n(3) {
			i.Spec.Ports = append(i.Spec.Ports, port(pick(p, fuzzPorts...), pick(p, fuzzProtos...), int32(p.n(3)*40)))
		}
		imports = append(imports, i)
	}
	var slices []*discoveryv1.EndpointSlice
	for range p.n(5) {
		s := slice(pick(p, fuzzNames...), pick(p, fuzzClusters...), pick(p, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN))
		if p.n(4) == 0 {
			delete(s.Labels, names.EndpointSliceManagedByLabel)
		}
		if p.n(4) == 0 {
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr(pick(p, fuzzPorts...)), Protocol: ptr(pick(p, fuzzProtos...))})
		}
		for range p.n(4) {
			e := discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: pick(p, nil, ptr(true), ptr(false))}}
			if h := pick(p, fuzzHosts...); h != "" {
				e.Hostname = ptr(h)
			}
			for range p.n(3) {
				e.Addresses = append(e.Addresses, pick(p, fuzzAddrs...))
			}
			if z := pick(p, "", "", "zone-a", names.OtherClusterZone, "-"); z != "" { // "-": hints without a zone
				e.Hints = &discoveryv1.EndpointHints{}
				if z != "-" {
					e.Hints.ForZones = []discoveryv1.ForZone{{Name: z}}
				}
			}
			s.Endpoints = append(s.Endpoints, e)
		}
		slices = append(slices, s)
	}
	return NewState(imports, slices)
}

// fuzzName is a question: from labels that exist in fuzzState's world, or the fuzzer's own string.
func fuzzName(p *picker, raw string) string {
	if p.n(4) == 0 {
		return raw
	}
	labels := []string{pick(p, "clusterset.local.", "ClusterSet.Local.", "cluster.local.", "")}
	for range p.n(7) {
		labels = append([]string{pick(p, "svc", "demo", "other", "web", "serve", "db", "member1", "member3", "web-0",
			"10-11-0-1", "fd00--1", "_http", "_tcp", "_udp", "_", "*", raw)}, labels...)
	}
	return strings.Join(labels, ".")
}

// FuzzAnswer: any state, any question: Answer never panics, its reply packs, and every record it
// gives is about the question: answers are owned by the question's name, SRV targets and
// additional records lie in the zone, the authority section holds the zone's SOA; fitted to 512
// bytes, it fits.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 1, 1, 2, 1, 3, 0, 4, 2, 1, 2, 3}, "web.demo.svc.clusterset.local.", uint16(dns.TypeSRV))
	f.Add([]byte{1, 0, 1, 2, 0, 0, 0, 1, 0, 1, 2, 0, 1, 1, 1, 2, 2, 1, 5, 3, 2, 1, 0}, "x", uint16(dns.TypeA))
	f.Add([]byte("the quick brown fox jumps over the lazy dog"), "_http._tcp.web.demo.svc.clusterset.local.", uint16(dns.TypeANY))
	f.Fuzz(func(t *testing.T, state []byte, raw string, qtype uint16) {
		p := &picker{b: state}
		src := fuzzState(p)
		name := fuzzName(p, raw)
		cfg := Config{Domain: pick(p, "clusterset.local", "clusterset.local.", "mcs.example"), TTL: uint32(p.n(3))}
		q := new(dns.Msg)
		q.SetQuestion(name, qtype)
		r := Answer(q, src, cfg)
		if r == nil || r.Id != q.Id || !r.Response {
			t.Fatalf("no reply to %q", name)
		}
		if r.Rcode == dns.RcodeFormatError {
			return // not a domain name
		}
		if _, err := r.Pack(); err != nil {
			t.Fatalf("%s %s: the reply does not pack: %v\n%s", name, dns.TypeToString[qtype], err, r)
		}
		zone := dns.CanonicalName(strings.TrimSuffix(cfg.Domain, "."))
		in := dns.IsSubDomain(zone, dns.CanonicalName(name))
		if !in && (r.Rcode != dns.RcodeRefused || len(r.Answer)+len(r.Ns)+len(r.Extra) != 0) {
			t.Fatalf("%s is outside %s: got %s", name, zone, r)
		}
		if in && (!r.Authoritative || (r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError)) {
			t.Fatalf("%s: %s aa=%v", name, dns.RcodeToString[r.Rcode], r.Authoritative)
		}
		if r.Rcode == dns.RcodeNameError && len(r.Answer) > 0 {
			t.Fatalf("%s: NXDOMAIN with answers %v", name, r.Answer)
		}
		for _, rr := range r.Answer {
			if rr.Header().Name != name {
				t.Fatalf("answer %s is not owned by the question %q", rr, name)
			}
			if s, ok := rr.(*dns.SRV); ok && !dns.IsSubDomain(zone, s.Target) {
				t.Fatalf("SRV target %s outside %s", s.Target, zone)
			}
		}
		for _, rr := range append(r.Ns, r.Extra...) {
			if rr.Header().Rrtype != dns.TypeOPT && !dns.IsSubDomain(zone, rr.Header().Name) {
				t.Fatalf("%s outside %s", rr, zone)
			}
		}
		if again := Answer(q, src, cfg); fmt.Sprint(again) != fmt.Sprint(r) {
			t.Fatalf("two answers to one question:\n%s\n%s", r, again)
		}
		// Fitted into the smallest buffer, it packs within it, and TC says when answers were cut.
		answers := len(r.Answer)
		Fit(r, dns.MinMsgSize)
		if b, err := r.Pack(); err != nil || len(b) > dns.MinMsgSize || r.Truncated != (len(r.Answer) < answers) {
			t.Fatalf("%s %s fitted to 512: %d bytes, %v, TC %v, %d of %d answers", name, dns.TypeToString[qtype], len(b), err, r.Truncated, len(r.Answer), answers)
		}
	})
}
