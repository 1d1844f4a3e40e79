package dnsserver

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/dnszone"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// headlessSlices are sync's copies of a dual-stack Headless service of n ready endpoints, each
// with a hostname, an IPv4 and an IPv6 address, in slices of 1,000 (the API's maximum).
func headlessSlices(service, cluster string, n int) []runtime.Object {
	var out []runtime.Object
	for _, family := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		for first := 0; first < n; first += 1000 {
			s := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprintf("%s-%s-%s-%d", service, cluster, family, first/1000),
					Labels: map[string]string{mcsv1beta1.LabelServiceName: service, mcsv1beta1.LabelSourceCluster: cluster,
						names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue}},
				AddressType: family,
				Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Protocol: new(corev1.ProtocolTCP), Port: new(int32(8080))}},
			}
			for i := first; i < min(first+1000, n); i++ {
				ip := netip.AddrFrom4([4]byte{10, 11, byte(i >> 8), byte(i)})
				if family == discoveryv1.AddressTypeIPv6 {
					ip = netip.AddrFrom16([16]byte{0xfd, 0, 0, 0x11, 14: byte(i >> 8), 15: byte(i)})
				}
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip.String()}, Hostname: new(fmt.Sprintf("web-%d", i))})
			}
			out = append(out, s)
		}
	}
	return out
}

// exchange sends q over network and returns the answer and its size on the wire; a UDP answer of
// any size is read whole, so that one larger than it should be is seen.
func exchange(t *testing.T, addr, network string, q *dns.Msg) (*dns.Msg, int) {
	t.Helper()
	co, err := dns.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	co.UDPSize = dns.MaxMsgSize
	_ = co.SetDeadline(time.Now().Add(5 * time.Second))
	if err := co.WriteMsg(q); err != nil {
		t.Fatal(err)
	}
	raw, err := co.ReadMsgHeader(nil)
	if err != nil {
		t.Fatalf("%s %s over %s: no answer: %v", dns.TypeToString[q.Question[0].Qtype], q.Question[0].Name, network, err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(raw); err != nil {
		t.Fatal(err)
	}
	return r, len(raw)
}

// A Headless service of 5,000 ready endpoints is answered over TCP with as many records as fit in
// 65,535 bytes (TC when some are left out); over UDP within the client's buffer, capped at 1,232
// bytes whatever it asks for, and 512 without EDNS, with TC.
func TestLargeHeadlessAnswersFit(t *testing.T) {
	objs := append(headlessSlices("web", "member1", 5000), serviceImport(mcsapi.V1beta1, "web", mcsv1beta1.Headless))
	m, _ := fakeMember(t, mcsapi.V1beta1, nil, objs...)
	s, _ := start(t, m)
	eventually(t, s, "web-4999.member1.web.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.11.19.135")
	const name = "web.demo.svc.clusterset.local."
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSRV} {
		q := new(dns.Msg).SetQuestion(name, qtype)
		full := dnszone.Answer(q, s.source.Load(), s.cfg.Zone) // what the caches hold, untruncated
		if len(full.Answer) != 5000 {
			t.Fatalf("%s: %d records in the caches' answer, want 5000", dns.TypeToString[qtype], len(full.Answer))
		}
		r, size := exchange(t, s.Addr(), "tcp", q)
		n := len(r.Answer)
		t.Logf("%s over TCP: %d bytes, %d of 5000 records, TC %v", dns.TypeToString[qtype], size, n, r.Truncated)
		if size > dns.MaxMsgSize || r.Rcode != dns.RcodeSuccess || n == 0 || r.Truncated != (n < 5000) {
			t.Errorf("%s over TCP: %d bytes, %s, %d records, TC %v", dns.TypeToString[qtype], size, dns.RcodeToString[r.Rcode], n, r.Truncated)
		}
		for i := range r.Answer {
			if r.Answer[i].String() != full.Answer[i].String() {
				t.Fatalf("%s over TCP: record %d is %v, want %v", dns.TypeToString[qtype], i, r.Answer[i], full.Answer[i])
			}
		}
		if n < 5000 {
			more := r.Copy()
			more.Answer = append(more.Answer, full.Answer[n])
			more.Compress = true
			if b, _ := more.Pack(); len(b) <= dns.MaxMsgSize {
				t.Errorf("%s over TCP: %d records sent, %d fit", dns.TypeToString[qtype], n, n+1)
			}
		}
		for _, edns := range []int{0, 4096, 65535} {
			q := new(dns.Msg).SetQuestion(name, qtype)
			limit := 512
			if edns > 0 {
				q.SetEdns0(uint16(edns), false)
				limit = dnszone.UDPSize
			}
			r, size := exchange(t, s.Addr(), "udp", q)
			if size > limit || !r.Truncated || len(r.Answer) == 0 {
				t.Errorf("%s over UDP, EDNS %d: %d bytes (at most %d), TC %v, %d records", dns.TypeToString[qtype], edns, size, limit, r.Truncated, len(r.Answer))
			}
			if o := r.IsEdns0(); (edns > 0) != (o != nil) || (o != nil && o.UDPSize() != dnszone.UDPSize) {
				t.Errorf("%s over UDP, EDNS %d: OPT %v, want one advertising %d when asked with one", dns.TypeToString[qtype], edns, o, dnszone.UDPSize)
			}
		}
	}
}
