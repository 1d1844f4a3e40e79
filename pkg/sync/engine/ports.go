package engine

// The port union of an exported service: what the import and derived Service carry, which
// constituent each port came from, and which of a constituent's ports carry traffic.

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// unionPort is one port of the union.
type unionPort struct {
	port mcsv1beta1.ServicePort // as the import and the derived Service carry it
	// def is the definition constituents' ports are matched on: the port with its effective name.
	def     mcsv1beta1.ServicePort
	cluster string // the constituent it came from
	own     string // its name in that constituent's Service
}

// effectiveName is a port's name in the union: its own, or for an unnamed port its protocol and
// number ("tcp-80"). A Service of more than one port must name every one of them, and the
// EndpointSlices of a Service name their ports as it does, so the name must be derived from the
// port alone: stable across passes and clusters, a DNS-1123 label of at most 10 characters
// ("sctp-65535", valid as an IANA service name too).
func effectiveName(p mcsv1beta1.ServicePort) string {
	if p.Name != "" {
		return p.Name
	}
	return strings.ToLower(string(normProtocol(p.Protocol))) + "-" + strconv.Itoa(int(p.Port))
}

// withEffectiveName is p named as the union matches it.
func withEffectiveName(p mcsv1beta1.ServicePort) mcsv1beta1.ServicePort {
	p.Name = effectiveName(p)
	return p
}

// mergePorts takes the union of all constituents' ports, oldest first, merged by effective name
// and then by (protocol, port): a duplicate takes the older definition, so a generated name that
// some Service uses for another port goes to the older of the two. A union of one port keeps
// the name it was given (none, often): only Services of several ports must name them. Any
// constituent whose own set of ports differs from the oldest's disagrees (SPEC 4, KEP: any
// difference is a PortConflict), whether or not its ports collide with the union. Collisions
// inside one Service are not conflicts between clusters, so they are dropped silently.
func mergePorts(cons []constituent) ([]unionPort, []string) {
	var out []unionPort
	byName := map[string]bool{}
	byPP := map[string]bool{}
	var clusters []string
	want := portSet(cons[0].svc.Spec.Ports)
	for i, c := range cons {
		if i > 0 && portSet(c.svc.Spec.Ports) != want {
			clusters = append(clusters, c.cluster)
		}
		for _, p := range mcsapi.Ports(c.svc.Spec.Ports) {
			def := withEffectiveName(p)
			pp := string(p.Protocol) + "/" + strconv.Itoa(int(p.Port))
			if byName[def.Name] || byPP[pp] {
				continue
			}
			byName[def.Name], byPP[pp] = true, true
			out = append(out, unionPort{port: def, def: def, cluster: c.cluster, own: p.Name})
		}
	}
	if len(out) == 1 {
		out[0].port.Name = out[0].own
	}
	sort.Strings(clusters)
	return out, clusters
}

// servedPorts maps each port of constituent c's own Service that the union holds exactly as c
// defines it, by the (name, protocol) its EndpointSlices carry, to the union's name for it: only
// those ports may send traffic to c's endpoints (KEP: traffic for a port goes only to
// constituents that export that port), and the copies must name them as the derived Service does,
// since kube-proxy matches slice ports to Service ports by name.
func servedPorts(c constituent, union []unionPort) map[string]string {
	out := map[string]string{}
	for _, sp := range c.svc.Spec.Ports {
		own := withEffectiveName(mcsapi.Ports([]corev1.ServicePort{sp})[0])
		for _, u := range union {
			if samePort(u.def, own) {
				out[portKey(sp.Name, sp.Protocol)] = u.port.Name
			}
		}
	}
	return out
}

func portKey(name string, proto corev1.Protocol) string {
	return name + "/" + string(normProtocol(proto))
}

// portLosses says, for each disagreeing constituent, which of its own ports the union leaves out
// and which of the union's ports its endpoints get no traffic on (servedPorts' rule), and which
// left-out ports the union carries under no definition at all: nothing answers on those.
func portLosses(union []unionPort, cons []constituent, disagreeing []string) ([]LosingExport, []string) {
	carried := map[string]bool{}
	for _, u := range union {
		carried[numberKey(u.def)] = true
	}
	unanswered := map[string]mcsv1beta1.ServicePort{}
	var losing []LosingExport
	for _, c := range cons {
		if !slices.Contains(disagreeing, c.cluster) {
			continue
		}
		own := mcsapi.Ports(c.svc.Spec.Ports)
		var left, unserved []string
		for _, p := range own {
			def := withEffectiveName(p)
			if slices.ContainsFunc(union, func(u unionPort) bool { return samePort(u.def, def) }) {
				continue
			}
			left = append(left, renderPort(p))
			if !carried[numberKey(def)] {
				unanswered[numberKey(def)] = p
			}
		}
		for _, u := range union {
			if !slices.ContainsFunc(own, func(p mcsv1beta1.ServicePort) bool { return samePort(u.def, withEffectiveName(p)) }) {
				unserved = append(unserved, renderPort(u.port))
			}
		}
		losing = append(losing, LosingExport{Cluster: c.cluster, Value: strings.Join(left, ","), Unserved: strings.Join(unserved, ",")})
	}
	ps := make([]mcsv1beta1.ServicePort, 0, len(unanswered))
	for _, p := range unanswered {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b mcsv1beta1.ServicePort) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
	})
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = renderPort(unnamed(noAppProtocol(p)))
	}
	return losing, out
}

// numberKey is what a client connects to: the port's number and protocol.
func numberKey(p mcsv1beta1.ServicePort) string {
	return string(normProtocol(p.Protocol)) + "/" + strconv.Itoa(int(p.Port))
}

func noAppProtocol(p mcsv1beta1.ServicePort) mcsv1beta1.ServicePort {
	p.AppProtocol = nil
	return p
}

// portsMessage is the PortConflict message: the union, each port with the export it came from,
// oldest first; then what the losing exports lose: their ports left out, the ports nothing
// answers on, the ports whose traffic does not reach them.
func portsMessage(union []unionPort, cons []constituent, losing []LosingExport, unanswered []string) string {
	var parts []string
	for i, c := range cons {
		var ps []string
		for _, u := range union {
			if u.cluster != c.cluster {
				continue
			}
			s := renderPort(u.port)
			if u.port.Name != u.own {
				s = renderPort(unnamed(u.port)) + " as " + u.port.Name
			}
			ps = append(ps, s)
		}
		if len(ps) == 0 {
			continue
		}
		from := "service export in"
		if i == 0 {
			from = "oldest service export in"
		}
		parts = append(parts, fmt.Sprintf("%q from %s %q", strings.Join(ps, ","), from, c.cluster))
	}
	using := `"<none>"`
	if n := len(parts); n > 0 {
		using = parts[n-1]
		if n > 1 {
			using = strings.Join(parts[:n-1], ", ") + " and " + using
		}
	}
	lost := groupLosses(" Not using ", losing, func(l LosingExport) string { return l.Value }, "from")
	if len(unanswered) > 0 {
		lost += " Nothing answers on " + strings.Join(unanswered, ", ") + "."
	}
	lost += groupLosses(" Traffic to ", losing, func(l LosingExport) string { return l.Unserved }, "does not reach")
	return fitMessage("Conflicting ports. Using "+using+".", lost, fmt.Sprintf(" %d/%d clusters disagree.", len(losing), len(cons)))
}

func unnamed(p mcsv1beta1.ServicePort) mcsv1beta1.ServicePort {
	p.Name = ""
	return p
}

func unionPorts(union []unionPort) []mcsv1beta1.ServicePort {
	out := make([]mcsv1beta1.ServicePort, len(union))
	for i, u := range union {
		out[i] = u.port
	}
	return out
}

func renderPort(p mcsv1beta1.ServicePort) string {
	s := strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol)
	if p.Name != "" {
		s = p.Name + ":" + s
	}
	if ap := strPtrVal(p.AppProtocol); ap != "" {
		s += "(" + ap + ")"
	}
	return s
}

// portSet renders a Service's ports order-independently, for comparison.
func portSet(ps []corev1.ServicePort) string {
	parts := make([]string, 0, len(ps))
	for _, p := range mcsapi.Ports(ps) {
		parts = append(parts, renderPort(p))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func samePort(a, b mcsv1beta1.ServicePort) bool {
	return a.Name == b.Name && normProtocol(a.Protocol) == normProtocol(b.Protocol) &&
		a.Port == b.Port && strPtrVal(a.AppProtocol) == strPtrVal(b.AppProtocol)
}
