package snapshot

import (
	"fmt"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// What differs between the copies sync would write of a source's slices and the copies a member
// holds, told once SliceDigest says that they differ: SliceDigest decides, this only says what
// it saw, over the same fields. Endpoints are told apart by their addresses, which a copy keeps as
// its source has them.

// EndpointChange is an endpoint both sides hold with other conditions, hostname, zone, hints or
// nodeName: what each side says of the fields that differ ("ready=true,serving=true"; "unset" for
// an unset one).
type EndpointChange struct {
	Addresses string `json:"addresses"`
	Source    string `json:"source"`
	Copy      string `json:"copy"`
}

// EndpointDiff is what differs, endpoints by their addresses (comma-joined), sorted.
type EndpointDiff struct {
	// Missing are in the wanted copies and not in those held; Extra the reverse.
	Missing, Extra []string
	Changed        []EndpointChange
	// Other names what else a copy held under the same name differs in: "ports", "address type".
	Other []string
}

// Empty says that no endpoint, port or address type differs: the digests can still differ by
// the endpoints' order or their grouping into slices.
func (d EndpointDiff) Empty() bool {
	return len(d.Missing)+len(d.Extra)+len(d.Changed)+len(d.Other) == 0
}

// DiffEndpoints says what differs between want, the copies sync would write, and have, those
// held; slices are paired by name for their ports and address type.
func DiffEndpoints(want, have []*discoveryv1.EndpointSlice) EndpointDiff {
	var d EndpointDiff
	w, h := endpointsByAddresses(want), endpointsByAddresses(have)
	for id, we := range w {
		he, ok := h[id]
		if !ok {
			d.Missing = append(d.Missing, id)
			continue
		}
		if src, cp := endpointFields(we, he); src != "" {
			d.Changed = append(d.Changed, EndpointChange{Addresses: id, Source: src, Copy: cp})
		}
	}
	for id := range h {
		if _, ok := w[id]; !ok {
			d.Extra = append(d.Extra, id)
		}
	}
	sort.Strings(d.Missing)
	sort.Strings(d.Extra)
	sort.Slice(d.Changed, func(i, j int) bool { return d.Changed[i].Addresses < d.Changed[j].Addresses })
	held := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range have {
		held[s.Name] = s
	}
	ports, family := false, false
	for _, s := range want {
		if o := held[s.Name]; o != nil {
			ports = ports || portsOf(s) != portsOf(o)
			family = family || s.AddressType != o.AddressType
		}
	}
	if ports {
		d.Other = append(d.Other, "ports")
	}
	if family {
		d.Other = append(d.Other, "address type")
	}
	return d
}

func endpointsByAddresses(slices []*discoveryv1.EndpointSlice) map[string]*discoveryv1.Endpoint {
	out := map[string]*discoveryv1.Endpoint{}
	for _, s := range slices {
		for i := range s.Endpoints {
			if id := strings.Join(s.Endpoints[i].Addresses, ","); out[id] == nil {
				out[id] = &s.Endpoints[i]
			}
		}
	}
	return out
}

// endpointFields renders the fields SliceDigest covers that differ between a and b, "" when none.
func endpointFields(a, b *discoveryv1.Endpoint) (inA, inB string) {
	var x, y []string
	field := func(name, va, vb string) {
		if va != vb {
			x, y = append(x, name+"="+va), append(y, name+"="+vb)
		}
	}
	word := func(t string) string {
		switch t {
		case "t":
			return "true"
		case "f":
			return "false"
		}
		return "unset"
	}
	field("ready", word(tri(a.Conditions.Ready)), word(tri(b.Conditions.Ready)))
	field("serving", word(tri(a.Conditions.Serving)), word(tri(b.Conditions.Serving)))
	field("terminating", word(tri(a.Conditions.Terminating)), word(tri(b.Conditions.Terminating)))
	field("hostname", orUnset(str(a.Hostname)), orUnset(str(b.Hostname)))
	field("zone", orUnset(str(a.Zone)), orUnset(str(b.Zone)))
	field("hints", orUnset(hintsOf(a)), orUnset(hintsOf(b)))
	field("nodeName", orUnset(str(a.NodeName)), orUnset(str(b.NodeName)))
	return strings.Join(x, ","), strings.Join(y, ",")
}

// hintsOf renders an endpoint's hints: "zone:a+b", "node:n1", both space-separated.
func hintsOf(e *discoveryv1.Endpoint) string {
	if e.Hints == nil {
		return ""
	}
	var zs, ns []string
	for _, z := range e.Hints.ForZones {
		zs = append(zs, z.Name)
	}
	for _, n := range e.Hints.ForNodes {
		ns = append(ns, n.Name)
	}
	var out []string
	if len(zs) > 0 {
		out = append(out, "zone:"+strings.Join(zs, "+"))
	}
	if len(ns) > 0 {
		out = append(out, "node:"+strings.Join(ns, "+"))
	}
	return strings.Join(out, " ")
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// portsOf renders a slice's ports as SliceDigest reads them (an unset protocol is TCP).
func portsOf(s *discoveryv1.EndpointSlice) string {
	var ps []string
	for _, p := range s.Ports {
		proto := "TCP"
		if p.Protocol != nil && *p.Protocol != "" {
			proto = string(*p.Protocol)
		}
		port := "unset"
		if p.Port != nil {
			port = fmt.Sprint(*p.Port)
		}
		ps = append(ps, str(p.Name)+":"+port+"/"+proto+"/"+str(p.AppProtocol))
	}
	return strings.Join(ps, ",")
}
