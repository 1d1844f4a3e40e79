// Package dnszone answers the clusterset zone of KEP-1645 (clusterset.local) as one member sees it:
// from that member's ServiceImports and the EndpointSlices `sync` wrote there. It is pure: a
// question and a Source in, a reply out; pkg/dnsserver feeds it from informer caches and the
// network. Names served:
//
//	NAME.NS.svc.DOMAIN                       A/AAAA, SRV (every port)
//	_PORT._PROTO.NAME.NS.svc.DOMAIN          SRV (a named port)
//	HOSTNAME.CLUSTERID.NAME.NS.svc.DOMAIN    A/AAAA of one cluster's endpoint (Headless)
//
// where HOSTNAME is the endpoint's hostname, or its first address dashed (10-1-2-3) when it has
// none. Only ready endpoints (conditions.ready unset or true) are answered. In a member that
// prefers its own endpoints (PreferSameCluster), a Headless service's own names (the first two)
// answer with those alone while one is ready, as the copies' zone hints tell (prefer.go).
package dnszone

import (
	"strings"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// DefaultTTL is the TTL of every record, negative answers included: short, since endpoints come
// and go and nothing invalidates a cache.
const DefaultTTL = 5

// Config is the zone and its TTL.
type Config struct {
	// Domain is the clusterset zone, "clusterset.local" (a trailing dot is optional).
	Domain string
	// TTL in seconds; DefaultTTL when 0.
	TTL uint32
}

// Source is what one member holds. Answer reads only the question's service, so an informer
// cache serves as well as State.
type Source interface {
	// Import is the ServiceImport NS/NAME; nil when there is none.
	Import(namespace, name string) *mcsv1beta1.ServiceImport
	// HasImports says whether the namespace holds any ServiceImport.
	HasImports(namespace string) bool
	// Slices are the EndpointSlices labelled multicluster.kubernetes.io/service-name=NAME in
	// NS; Answer keeps those sync wrote (managed-by and source-cluster labels).
	Slices(namespace, name string) []*discoveryv1.EndpointSlice
}

// Answer answers req from src, authoritatively for the zone:
//   - a name outside the zone: REFUSED;
//   - a name that does not exist (no such import, port, cluster or host): NXDOMAIN;
//   - a name that exists without records of the type asked: NOERROR and no answer (NODATA);
//     both negative answers carry the zone's SOA in the authority section.
//
// Every ServiceImport is served, whoever made it: it is this member's import, whether kubectl-mcs,
// Karmada or another MCS controller wrote it, and a Pod asking for the clusterset name wants it.
// Only the endpoints of Headless imports come from kubectl-mcs's slices, so a Headless import
// another controller fills has no endpoints here.
func Answer(req *dns.Msg, src Source, cfg Config) *dns.Msg {
	m := new(dns.Msg)
	switch {
	case req.Opcode != dns.OpcodeQuery:
		return m.SetRcode(req, dns.RcodeNotImplemented)
	case len(req.Question) != 1:
		return m.SetRcode(req, dns.RcodeFormatError)
	}
	m.SetReply(req)
	if o := req.IsEdns0(); o != nil {
		m.SetEdns0(UDPSize, false) // our buffer, whatever the client's (Fit keeps the answer to both)
	}
	q := req.Question[0]
	if _, ok := dns.IsDomainName(q.Name); !ok || !dns.IsFqdn(q.Name) { // a name off the wire is both
		m.Rcode = dns.RcodeFormatError
		return m
	}
	z := newZone(cfg)
	name := dns.CanonicalName(q.Name)
	if (q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY) || !dns.IsSubDomain(z.origin, name) {
		m.Rcode = dns.RcodeRefused
		return m
	}
	m.Authoritative = true
	labels := dns.SplitDomainName(name)
	rel := labels[:len(labels)-dns.CountLabel(z.origin)]
	if len(rel) == 0 && (q.Qtype == dns.TypeSOA || q.Qtype == dns.TypeANY) {
		m.Answer = []dns.RR{z.soa(q.Name)}
		return m
	}
	found, exists := z.lookup(rel, q, src)
	switch {
	case !exists:
		m.Rcode = dns.RcodeNameError
		m.Ns = []dns.RR{z.soa(z.origin)}
	case len(found.answer) == 0:
		m.Ns = []dns.RR{z.soa(z.origin)}
	default:
		m.Answer, m.Extra = found.answer, append(found.extra, m.Extra...)
	}
	return m
}

// zone is the configuration, normalised.
type zone struct {
	origin string // "clusterset.local."
	ttl    uint32
}

func newZone(cfg Config) zone {
	z := zone{origin: dns.CanonicalName(strings.TrimSuffix(cfg.Domain, ".")), ttl: cfg.TTL}
	if z.ttl == 0 {
		z.ttl = DefaultTTL
	}
	return z
}

func (z zone) header(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: z.ttl}
}

// soa is the zone's SOA; its minimum, the TTL of negative answers, is the records' TTL.
func (z zone) soa(owner string) dns.RR {
	return &dns.SOA{Hdr: z.header(owner, dns.TypeSOA), Ns: "ns.dns." + z.origin, Mbox: "hostmaster." + z.origin,
		Serial: 1, Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: z.ttl}
}

// records is what a name holds for the type asked.
type records struct {
	answer, extra []dns.RR
}

// lookup finds the records of one name, given by its labels below the zone, and whether the
// name exists at all (an empty non-terminal, such as svc.DOMAIN, exists).
func (z zone) lookup(rel []string, q dns.Question, src Source) (records, bool) {
	n := len(rel)
	switch {
	case n == 0:
		return records{}, true // the apex: SOA is answered before
	case rel[n-1] != "svc" || n > 5:
		return records{}, false
	case n == 1:
		return records{}, true
	case n == 2:
		return records{}, src.HasImports(rel[0])
	}
	var only *endpointName // HOSTNAME.CLUSTERID.NAME...: that endpoint alone
	if n == 5 && !strings.HasPrefix(rel[0], "_") {
		only = &endpointName{cluster: rel[1], label: rel[0]}
	}
	s := loadService(src, rel[n-2], rel[n-3], only)
	if s == nil {
		return records{}, false
	}
	owner := q.Name
	switch n {
	case 3:
		return z.serviceRecords(s, owner, q.Qtype, nil), true
	case 4:
		// _PROTO.NAME or CLUSTERID.NAME: empty non-terminals of the two longer forms.
		if proto, ok := strings.CutPrefix(rel[0], "_"); ok {
			return records{}, len(s.ports(func(p string) bool { return p != "" }, proto)) > 0
		}
		return records{}, s.hasCluster(rel[0])
	}
	if port, ok := strings.CutPrefix(rel[0], "_"); ok {
		proto, ok := strings.CutPrefix(rel[1], "_")
		named := s.ports(func(p string) bool { return p != "" && p == port }, proto)
		if !ok || len(named) == 0 {
			return records{}, false
		}
		return z.serviceRecords(s, owner, q.Qtype, named), true
	}
	eps := s.endpoint(rel[1], rel[0])
	if len(eps) == 0 {
		return records{}, false
	}
	var r records
	for _, e := range eps {
		r.answer = append(r.answer, z.addresses(owner, q.Qtype, e.addrs)...)
	}
	r.answer = dedupe(r.answer)
	return r, true
}
