package corefile

import (
	"fmt"
	"net/netip"
	"strings"
)

// The rule that keeps init --dns from breaking a cluster's DNS (docs/dns.md, "What init
// refuses"). CoreDNS hands a query to the server block with the most specific zone, and a plugin
// sees only the queries of its block. Our block for the domain D therefore takes every name under
// D away from the other blocks, and from whatever answered those names in them. It refuses D when
// the Corefile, outside our block, serves a zone Z other than the root that
//   - is D (someone already answers the zone: a second answer would shadow theirs),
//   - lies under D (D = local takes cluster.local from the kubernetes plugin), or
//   - holds D (D = svc.cluster.local takes names of cluster.local from it),
//
// where the zones served are every server block's keys, the zones that the zone-serving plugins
// name (kubernetes, multicluster, etcd, k8s_external, auto, secondary ZONES...; file, hosts
// FILE ZONES...; template CLASS TYPE ZONES...), forward's and grpc's FROM, and every name a
// rewrite rule matches or writes, all as CoreDNS reads them (read.go: snippets and imports
// resolved, quotes removed). A placeholder in any of them, or in a plugin's name, is refused
// rather than guessed: CoreDNS fills it from its pod's environment, which init cannot see. The root "." is no reason to refuse: a block for "." answers what no more
// specific block does, and taking D from it (usually a forward to the node's resolvers) is the
// point of our block. A reverse zone given as a CIDR counts as the enclosing in-addr.arpa or
// ip6.arpa zone. Blocks on every port count, whichever port our block uses.

// zoneArg is where a zone-serving plugin's zones begin among its arguments.
var zoneArg = map[string]int{
	"kubernetes": 0, "multicluster": 0, "etcd": 0, "k8s_external": 0, "auto": 0, "secondary": 0,
	"file": 1, "hosts": 1, "template": 2,
}

// ServedError says that the Corefile already serves the domain, or part of it, outside our block.
type ServedError struct {
	Domain string // the domain asked for
	Zone   string // the zone served that overlaps it
	Block  string // the server block's keys, as written
	Plugin string // the plugin serving Zone; empty when the block's key does
}

func (e *ServedError) Error() string {
	what := fmt.Sprintf("%q", e.Domain)
	switch {
	case e.Zone == e.Domain:
	case strings.HasSuffix(e.Zone, "."+e.Domain):
		what = fmt.Sprintf("%q, inside %q", e.Zone, e.Domain)
	default:
		what = fmt.Sprintf("%q as part of %q", e.Domain, e.Zone)
	}
	where := fmt.Sprintf("server block %q", e.Block)
	if e.Plugin != "" {
		where += ", plugin " + e.Plugin
	}
	return fmt.Sprintf("already serves %s (%s)", what, where)
}

// served returns the first place, in Corefile order, where servers serve domain or part of it
// (a *ServedError), or a zone that a placeholder names; nil when there is none.
func served(servers []Server, domain string) error {
	for _, s := range servers {
		block := shown(strings.Join(s.Keys, " "))
		for _, k := range s.Keys {
			if hasPlaceholder(k) {
				return unknownZone(block, "", k)
			}
			if z := normalize(zoneOf(k)); overlaps(z, domain) {
				return &ServedError{Domain: domain, Zone: z, Block: block}
			}
		}
		for _, d := range s.Directives {
			if hasPlaceholder(d.Name) {
				return fmt.Errorf("server block %q: the plugin %q is a placeholder, filled from the CoreDNS pod's environment: which zones it serves cannot be told here", block, shown(d.Name))
			}
			for _, z := range pluginZones(d) {
				if hasPlaceholder(z) {
					return unknownZone(block, d.Name, z)
				}
				if z = normalize(z); overlaps(z, domain) {
					return &ServedError{Domain: domain, Zone: z, Block: block, Plugin: d.Name}
				}
			}
		}
	}
	return nil
}

// unknownZone refuses a zone written with a placeholder.
func unknownZone(block, plugin, zone string) error {
	where := fmt.Sprintf("server block %q", block)
	if plugin != "" {
		where += ", plugin " + plugin
	}
	return fmt.Errorf("%s: %q holds a placeholder, filled from the CoreDNS pod's environment: whether it overlaps the domain cannot be told here", where, shown(zone))
}

// pluginZones are the zones a directive names explicitly (one without any serves its block's).
func pluginZones(d Directive) []string {
	if i, ok := zoneArg[d.Name]; ok {
		if len(d.Args) > i {
			return d.Args[i:]
		}
		return nil
	}
	switch d.Name {
	case "forward", "grpc":
		return d.Args[:min(1, len(d.Args))]
	case "rewrite":
		var out []string
		for _, words := range append([][]string{d.Args}, d.Options...) {
			for _, w := range words {
				if hasPlaceholder(w) {
					out = append(out, w)
				} else if n := nameIn(w); n != "" {
					out = append(out, n)
				}
			}
		}
		return out
	}
	return nil
}

// nameIn is the domain name a rewrite word ends with: "clusterset.local" of ".clusterset.local",
// "(.*)\.clusterset\.local\.?$" or "{1}.clusterset.local"; empty for a word without a dot in it
// (keywords, "(.*)").
func nameIn(w string) string {
	w = strings.TrimRight(strings.ReplaceAll(strings.ToLower(w), `\`, ""), "$?*+)|.")
	i := len(w)
	for i > 0 && strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-_.", rune(w[i-1])) {
		i--
	}
	n := strings.Trim(w[i:], ".")
	if !strings.Contains(w[i:], ".") || n == "" {
		return ""
	}
	return n
}

// normalize lower-cases a zone, drops its trailing dot and turns a CIDR into its reverse zone
// (cut at the enclosing octet or nibble: a superset, never less).
func normalize(z string) string {
	z = strings.ToLower(strings.TrimSuffix(z, "."))
	if z == "" {
		return "."
	}
	p, err := netip.ParsePrefix(z)
	if err != nil {
		return z
	}
	var labels []string
	if a := p.Masked().Addr(); a.Is4() {
		b := a.As4()
		for i := p.Bits()/8 - 1; i >= 0; i-- {
			labels = append(labels, fmt.Sprint(b[i]))
		}
		labels = append(labels, "in-addr", "arpa")
	} else {
		b := a.As16()
		for i := p.Bits()/4 - 1; i >= 0; i-- {
			labels = append(labels, fmt.Sprintf("%x", b[i/2]>>(4*(1-i%2))&0xf))
		}
		labels = append(labels, "ip6", "arpa")
	}
	return strings.Join(labels, ".")
}

// overlaps reports whether zone z, served by someone else, and our domain share a name: one is
// the other or lies under it. The root overlaps nothing (see the rule above).
func overlaps(z, domain string) bool {
	return z != "." && (z == domain || strings.HasSuffix(z, "."+domain) || strings.HasSuffix(domain, "."+z))
}
