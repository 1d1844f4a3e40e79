package dnszone

import (
	"fmt"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		edns int // 0: no OPT record
		tcp  bool
		want int
	}{
		{0, false, 512}, {0, true, 65535}, {4096, true, 65535},
		{65535, false, UDPSize}, {4096, false, UDPSize}, {1232, false, 1232}, {1000, false, 1000}, {100, false, 512},
	} {
		q := new(dns.Msg).SetQuestion("web"+z, dns.TypeA)
		if c.edns > 0 {
			q.SetEdns0(uint16(c.edns), false)
		}
		if got := Limit(q, c.tcp); got != c.want {
			t.Errorf("EDNS %d, TCP %v: %d, want %d", c.edns, c.tcp, got, c.want)
		}
	}
}

// packed is m's length on the wire, compressed.
func packed(t *testing.T, m *dns.Msg) int {
	t.Helper()
	m.Compress = true
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func a(name string, i int) dns.RR {
	return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: []byte{10, 0, byte(i >> 8), byte(i)}}
}

// Answer records that do not fit are left out from the end with TC set: as many as fit stay.
func TestFitLeavesOutAnswersWithTC(t *testing.T) {
	for _, size := range []int{512, 1232, 65535} {
		m := new(dns.Msg).SetQuestion("web"+z, dns.TypeA)
		m.Response = true
		m.SetEdns0(UDPSize, false)
		var all []dns.RR
		for i := range 5000 {
			all = append(all, a("web"+z, i))
		}
		m.Answer = slices.Clone(all)
		Fit(m, size)
		n := len(m.Answer)
		if got := packed(t, m); got > size || !m.Truncated || n == 0 || !slices.Equal(m.Answer, all[:n]) || m.IsEdns0() == nil {
			t.Fatalf("size %d: %d bytes, TC %v, %d answers, OPT %v", size, got, m.Truncated, n, m.IsEdns0())
		}
		m.Answer = all[:n+1]
		if packed(t, m) <= size {
			t.Errorf("size %d: %d answers kept, %d fit", size, n, n+1)
		}
	}
}

// Additional records that do not fit are left out by whole RRsets, TC clear (RFC 2181 9).
func TestFitLeavesOutWholeAdditionalRRsets(t *testing.T) {
	m := new(dns.Msg).SetQuestion("_http._tcp.web"+z, dns.TypeSRV)
	m.Response = true
	m.SetEdns0(UDPSize, false)
	opt := m.Extra[0]
	m.Extra = nil
	for i := range 40 {
		target := fmt.Sprintf("web-%d.member1.web%s", i, z)
		m.Answer = append(m.Answer, &dns.SRV{Hdr: dns.RR_Header{Name: "_http._tcp.web" + z, Rrtype: dns.TypeSRV, Class: dns.ClassINET, Ttl: 5},
			Priority: 0, Weight: 100, Port: 8080, Target: target})
		for j := range 3 { // three addresses per target: an RRset of three
			m.Extra = append(m.Extra, a(target, 3*i+j))
		}
	}
	extra := m.Extra
	m.Extra = []dns.RR{opt}
	size := packed(t, m) + 500 // the answers and some of the additional records
	m.Extra = append(extra, opt)
	answers := slices.Clone(m.Answer)
	Fit(m, size)
	if got := packed(t, m); got > size || m.Truncated || !slices.Equal(m.Answer, answers) || m.IsEdns0() == nil {
		t.Fatalf("%d bytes, TC %v, %d answers, OPT %v", got, m.Truncated, len(m.Answer), m.IsEdns0())
	}
	extra = m.Extra[:len(m.Extra)-1]
	if len(extra) == 0 || len(extra)%3 != 0 || len(extra) == 120 {
		t.Errorf("additional records kept: %d, want whole RRsets of 3, some left out", len(extra))
	}
}

// An answer that fits is left whole.
func TestFitKeepsWhatFits(t *testing.T) {
	r := ask(t, fixture(), Config{Domain: "clusterset.local"}, "web"+z, dns.TypeSRV)
	want := fmt.Sprint(r.Answer, r.Extra)
	Fit(r, dns.MinMsgSize)
	if r.Truncated || fmt.Sprint(r.Answer, r.Extra) != want {
		t.Errorf("TC %v, %v", r.Truncated, r)
	}
}
