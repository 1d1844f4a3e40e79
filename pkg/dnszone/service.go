package dnszone

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// service is one import and, when Headless, its ready endpoints.
type service struct {
	ns, name string
	imp      *mcsv1beta1.ServiceImport
	eps      []endpoint
}

// endpoint is one ready endpoint of a slice sync copied from cluster.
type endpoint struct {
	cluster string // the slice's source-cluster, lower-cased
	label   string // its hostname, or its first address dashed; lower-cased
	addrs   []netip.Addr
	ports   []discoveryv1.EndpointPort
	origin  origin // whose it is, as its zone hints say (prefer.go)
}

func (s *service) headless() bool { return s.imp.Spec.Type == mcsv1beta1.Headless }

// endpointName is the name of one endpoint: its cluster and label, lower-cased.
type endpointName struct{ cluster, label string }

// loadService reads NS/NAME from src; nil when there is no such import. With only, it keeps only
// the endpoints of that name and builds no other: a question about one pod of a large service
// costs a comparison per endpoint, not a record.
func loadService(src Source, ns, name string, only *endpointName) *service {
	imp := src.Import(ns, name)
	if imp == nil {
		return nil
	}
	s := &service{ns: ns, name: name, imp: imp}
	if !s.headless() {
		return s
	}
	for _, sl := range src.Slices(ns, name) {
		cluster := strings.ToLower(sl.Labels[mcsv1beta1.LabelSourceCluster])
		if sl.Namespace != ns || sl.Labels[mcsv1beta1.LabelServiceName] != name || cluster == "" ||
			sl.Labels[names.EndpointSliceManagedByLabel] != names.EndpointSliceManagedByValue ||
			(only != nil && cluster != only.cluster) {
			continue
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready ||
				only != nil && e.Hostname != nil && *e.Hostname != "" && !strings.EqualFold(*e.Hostname, only.label) {
				continue
			}
			addrs := parseIPs(e.Addresses)
			if len(addrs) == 0 {
				continue
			}
			var label string
			if e.Hostname != nil && *e.Hostname != "" {
				label = strings.ToLower(*e.Hostname)
			} else {
				label = dashed(addrs[0])
			}
			if only != nil && label != only.label {
				continue
			}
			s.eps = append(s.eps, endpoint{cluster: cluster, label: label, addrs: addrs, ports: sl.Ports, origin: originOf(e.Hints)})
		}
	}
	return s
}

// parseIPs keeps the addresses that are IPs (an FQDN slice has none).
func parseIPs(in []string) []netip.Addr {
	var out []netip.Addr
	for _, a := range in {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Zone() == "" {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// dashed is the name of an endpoint without a hostname: 10.1.2.3 -> 10-1-2-3, fd00::1 -> fd00--1.
func dashed(ip netip.Addr) string { return dasher.Replace(ip.String()) }

var dasher = strings.NewReplacer(".", "-", ":", "-")

// ports are the import's ports whose lower-cased name match accepts, of protocol proto ("tcp").
func (s *service) ports(match func(name string) bool, proto string) []mcsv1beta1.ServicePort {
	var out []mcsv1beta1.ServicePort
	for _, p := range s.imp.Spec.Ports {
		if match(strings.ToLower(p.Name)) && strings.EqualFold(protocol(&p.Protocol), proto) {
			out = append(out, p)
		}
	}
	return out
}

// protocol is a port's protocol, TCP when unset (as the API defaults it).
func protocol(p *corev1.Protocol) string {
	if p == nil || *p == "" {
		return string(corev1.ProtocolTCP)
	}
	return string(*p)
}

func (s *service) hasCluster(cluster string) bool {
	for _, e := range s.eps {
		if e.cluster == strings.ToLower(cluster) {
			return true
		}
	}
	return false
}

// endpoint is every ready endpoint of cluster named label (a pod in two slices of a dual-stack
// service is two endpoints).
func (s *service) endpoint(cluster, label string) []endpoint {
	var out []endpoint
	for _, e := range s.eps {
		if e.cluster == strings.ToLower(cluster) && e.label == strings.ToLower(label) {
			out = append(out, e)
		}
	}
	return out
}

// fqdn is the service's name in the zone.
func (z zone) fqdn(s *service) string { return s.name + "." + s.ns + ".svc." + z.origin }

// serviceRecords answers NAME.NS.svc (only == nil: every port) or _PORT._PROTO.NAME.NS.svc
// (only: that port). SRV targets are NAME's own name (ClusterSetIP) or each endpoint's name
// (Headless), with their addresses in the additional section. A Headless service answers with
// its preferred endpoints: in a member that prefers its own, those while one is ready.
func (z zone) serviceRecords(s *service, owner string, qtype uint16, only []mcsv1beta1.ServicePort) records {
	var r records
	eps := preferred(s.eps)
	if only == nil && qtype != dns.TypeSRV {
		if s.headless() {
			for _, e := range eps {
				r.answer = append(r.answer, z.addresses(owner, qtype, e.addrs)...)
			}
		} else {
			r.answer = z.addresses(owner, qtype, parseIPs(s.imp.Spec.IPs))
		}
	}
	if qtype != dns.TypeSRV && qtype != dns.TypeANY {
		return records{answer: dedupe(r.answer)}
	}
	ports := only
	if ports == nil {
		ports = s.imp.Spec.Ports
	}
	if !s.headless() {
		target := z.fqdn(s)
		for _, p := range ports {
			r.answer = append(r.answer, z.srv(owner, uint16(p.Port), target))
		}
		if len(ports) > 0 {
			r.extra = z.addresses(target, dns.TypeANY, parseIPs(s.imp.Spec.IPs))
		}
		return records{answer: dedupe(r.answer), extra: dedupe(r.extra)}
	}
	for _, e := range eps {
		target := e.label + "." + e.cluster + "." + z.fqdn(s)
		n := len(r.answer)
		for _, ep := range e.ports {
			if ep.Port != nil && served(ports, ep) {
				r.answer = append(r.answer, z.srv(owner, uint16(*ep.Port), target))
			}
		}
		if len(r.answer) > n {
			r.extra = append(r.extra, z.addresses(target, dns.TypeANY, e.addrs)...)
		}
	}
	return records{answer: dedupe(r.answer), extra: dedupe(r.extra)}
}

// served says whether an endpoint port is one of ports (by name and protocol: the endpoint's
// number is the target port, not the service's).
func served(ports []mcsv1beta1.ServicePort, ep discoveryv1.EndpointPort) bool {
	name := ""
	if ep.Name != nil {
		name = *ep.Name
	}
	for _, p := range ports {
		if p.Name == name && strings.EqualFold(protocol(&p.Protocol), protocol(ep.Protocol)) {
			return true
		}
	}
	return false
}

func (z zone) srv(owner string, port uint16, target string) dns.RR {
	return &dns.SRV{Hdr: z.header(owner, dns.TypeSRV), Priority: 0, Weight: 100, Port: port, Target: target}
}

// addresses are A (IPv4) and AAAA (IPv6) records of addrs, as qtype asks (ANY: both).
func (z zone) addresses(owner string, qtype uint16, addrs []netip.Addr) []dns.RR {
	var out []dns.RR
	for _, ip := range addrs {
		switch {
		case ip.Is4() && (qtype == dns.TypeA || qtype == dns.TypeANY):
			out = append(out, &dns.A{Hdr: z.header(owner, dns.TypeA), A: ip.AsSlice()})
		case ip.Is6() && (qtype == dns.TypeAAAA || qtype == dns.TypeANY):
			out = append(out, &dns.AAAA{Hdr: z.header(owner, dns.TypeAAAA), AAAA: ip.AsSlice()})
		}
	}
	return out
}

// dedupe drops repeated records and sorts the rest in the order of their text, so that an answer
// depends on the state only.
func dedupe(rrs []dns.RR) []dns.RR {
	byText := make(map[string]dns.RR, len(rrs))
	keys := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		if k := sortKey(rr); byText[k] == nil {
			byText[k] = rr
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]dns.RR, len(keys))
	for i, k := range keys {
		out[i] = byText[k]
	}
	return out
}

// sortKey orders records as their text does: every record of an answer has the zone's TTL and
// class, so owner, type and data are what tells them apart. An address is formatted alone, a
// fifth of the cost of the record's whole text, which a 5,000-endpoint answer pays on every query.
func sortKey(rr dns.RR) string {
	h := rr.Header()
	var data string
	switch r := rr.(type) {
	case *dns.A:
		data = r.A.String()
	case *dns.AAAA:
		data = r.AAAA.String()
	default:
		data = strings.TrimPrefix(rr.String(), h.String())
	}
	return h.Name + "\t" + dns.TypeToString[h.Rrtype] + "\t" + data
}
