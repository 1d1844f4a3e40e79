package dnszone

import "github.com/miekg/dns"

// UDPSize is the largest answer sent over UDP and the buffer the OPT record of an answer
// advertises: DNS Flag Day 2020's 1,232 bytes, which crosses any path without IP fragmentation.
// A client asking for more gets no more: an answer of 64 KB to a query of 60 bytes is an
// amplifier, and above 65,507 bytes UDP cannot carry it at all.
const UDPSize = 1232

// Limit is the size in bytes the answer to req must fit in: over TCP the 65,535 its length
// prefix allows (RFC 7766; EDNS sizes are for UDP only), over UDP the client's EDNS buffer kept
// between 512 (RFC 6891) and UDPSize, and 512 without EDNS (RFC 1035).
func Limit(req *dns.Msg, tcp bool) int {
	if tcp {
		return dns.MaxMsgSize
	}
	if o := req.IsEdns0(); o != nil {
		return min(max(int(o.UDPSize()), dns.MinMsgSize), UDPSize)
	}
	return dns.MinMsgSize
}

// Fit makes m, compressed, fit in size bytes as RFC 2181 section 9 says. When answer or
// authority records do not fit, the records at the end are left out and TC is set (the client
// retries over TCP, or over TCP takes what fits). When only additional records (an SRV target's
// addresses) do not fit, whole RRsets are left out and TC stays clear: the client can look the
// targets up. The OPT record is kept.
func Fit(m *dns.Msg, size int) {
	answers, ns, truncated := len(m.Answer), len(m.Ns), m.Truncated
	var extra []dns.RR // the additional records but OPT, in order, as Truncate counts them
	for _, rr := range m.Extra {
		if rr.Header().Rrtype != dns.TypeOPT {
			extra = append(extra, rr)
		}
	}
	// miekg's Truncate leaves out records from the end of each section in turn, counting their
	// compressed length and the OPT record's, and sets TC when any was left out.
	m.Truncate(size)
	m.Compress = true
	if truncated || len(m.Answer) < answers || len(m.Ns) < ns || !m.Truncated {
		return
	}
	m.Truncated = false
	kept, opt := m.Extra, []dns.RR(nil)
	if n := len(kept); n > 0 && kept[n-1].Header().Rrtype == dns.TypeOPT {
		kept, opt = kept[:n-1], kept[n-1:]
	}
	// The first record left out may share its RRset with the last ones kept: drop those too.
	if n := len(kept); n < len(extra) {
		for n > 0 && sameRRset(kept[n-1], extra[n]) {
			n--
		}
		kept = kept[:n]
	}
	m.Extra = append(kept, opt...)
}

func sameRRset(a, b dns.RR) bool {
	ha, hb := a.Header(), b.Header()
	return ha.Rrtype == hb.Rrtype && ha.Class == hb.Class && dns.CanonicalName(ha.Name) == dns.CanonicalName(hb.Name)
}
