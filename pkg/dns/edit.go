package dns

import (
	"fmt"
	"regexp"
	"strings"
)

const (
	// BeginMarker and EndMarker enclose the one server block kubectl-mcs owns in a Corefile.
	BeginMarker = "# kubectl-mcs:begin"
	EndMarker   = "# kubectl-mcs:end"

	// DefaultDomain is the clusterset zone of KEP-1645 and of the mcs-api conformance suite.
	DefaultDomain = "clusterset.local"

	derivedPrefix = "derived-"
)

// connectionOptions are the kubernetes plugin options copied from the cluster's own stanza into
// ours: how it reaches the apiserver and which namespaces it may answer for.
var connectionOptions = map[string]bool{"endpoint": true, "tls": true, "kubeconfig": true, "namespaces": true}

// span finds our marked block: its first and last line (-1, -1 when absent). Markers that do not
// form exactly one begin/end pair in that order are an error: someone else edited them.
func span(lines []string) (int, int, error) {
	begin, end := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, BeginMarker):
			if begin >= 0 {
				return 0, 0, fmt.Errorf("%q appears twice", BeginMarker)
			}
			begin = i
		case strings.HasPrefix(t, EndMarker):
			if end >= 0 {
				return 0, 0, fmt.Errorf("%q appears twice", EndMarker)
			}
			end = i
		}
	}
	if (begin < 0) != (end < 0) || end < begin {
		return 0, 0, fmt.Errorf("the %q/%q markers do not enclose a block", BeginMarker, EndMarker)
	}
	return begin, end, nil
}

// Has reports whether the Corefile holds our block.
func Has(corefile string) bool {
	b, _, err := span(strings.Split(corefile, "\n"))
	return err == nil && b >= 0
}

// Remove returns the Corefile without our block; unchanged when it has none.
func Remove(corefile string) (string, error) {
	lines := strings.Split(corefile, "\n")
	b, e, err := span(lines)
	if err != nil {
		return "", err
	}
	if b < 0 {
		return corefile, nil
	}
	return strings.Join(append(lines[:b:b], lines[e+1:]...), "\n"), nil
}

// Apply returns the Corefile with our block for domain, replacing ours in place when present and
// appending it otherwise. It refuses a Corefile it cannot parse, one that serves domain (or a zone
// under it) outside our block, and one with no kubernetes plugin to answer from.
func Apply(corefile, domain string) (string, error) {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	lines := strings.Split(corefile, "\n")
	b, e, err := span(lines)
	if err != nil {
		return "", err
	}
	rest := corefile
	if b >= 0 {
		rest = strings.Join(append(append([]string{}, lines[:b]...), lines[e+1:]...), "\n")
	}
	servers, err := Parse(rest)
	if err != nil {
		return "", fmt.Errorf("cannot parse the Corefile: %w", err)
	}
	var host *Server
	for i, s := range servers {
		for _, z := range s.Zones() {
			if z == domain || strings.HasSuffix(z, "."+domain) {
				return "", fmt.Errorf("line %d: zone %s is already served outside the kubectl-mcs block", s.First+1, z)
			}
		}
		if host == nil && s.Find("kubernetes") != nil {
			host = &servers[i]
		}
	}
	if host == nil {
		return "", fmt.Errorf("no server block uses the kubernetes plugin, which the clusterset names are answered from")
	}
	block, err := Block(domain, *host)
	if err != nil {
		return "", err
	}
	if b >= 0 {
		out := append(append(append([]string{}, lines[:b]...), strings.Split(strings.TrimSuffix(block, "\n"), "\n")...), lines[e+1:]...)
		return strings.Join(out, "\n"), nil
	}
	if rest != "" && !strings.HasSuffix(rest, "\n") {
		rest += "\n"
	}
	return rest + block, nil
}

// Block renders our server block for domain, answering from the cluster domain that host's
// kubernetes plugin serves, on host's port:
//   - NAME.NS.svc.DOMAIN and _PORT._PROTO.NAME.NS.svc.DOMAIN are rewritten to derived-NAME in the
//     cluster domain, where the derived Service and its EndpointSlices answer A/AAAA (ClusterSetIP:
//     the Service's IPs, which are the ServiceImport's; Headless: the ready endpoints) and SRV;
//   - answer names, and the SRV target of a ClusterSetIP service, are mapped back to DOMAIN;
//     Headless SRV targets stay the per-endpoint names of the cluster domain, which resolve;
//   - every other name in DOMAIN is NXDOMAIN (template), never a local Service of the same name.
func Block(domain string, host Server) (string, error) {
	k := host.Find("kubernetes")
	zone := ""
	if len(k.Args) > 0 {
		zone = zoneOf(k.Args[0])
	} else if z := host.Zones(); len(z) > 0 {
		zone = z[0]
	}
	if zone == "" || zone == "." {
		return "", fmt.Errorf("the kubernetes plugin serves no cluster domain")
	}
	d, c := regexp.QuoteMeta(domain), regexp.QuoteMeta(zone)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (written by kubectl mcs init --dns; init --dns=false removes it)\n", BeginMarker)
	fmt.Fprintf(&sb, "%s:%s {\n", domain, host.Port())
	sb.WriteString("    errors\n")
	sb.WriteString("    rewrite stop {\n")
	fmt.Fprintf(&sb, "        name regex ^(_[^.]+\\._[^.]+\\.)?([^.]+)\\.([^.]+)\\.svc\\.%s\\.$ {1}%s{2}.{3}.svc.%s.\n", d, derivedPrefix, zone)
	fmt.Fprintf(&sb, "        answer name ^(_[^.]+\\._[^.]+\\.)?%s([^.]+)\\.([^.]+)\\.svc\\.%s\\.$ {1}{2}.{3}.svc.%s.\n", derivedPrefix, c, domain)
	fmt.Fprintf(&sb, "        answer value ^%s([^.]+)\\.([^.]+)\\.svc\\.%s\\.$ {1}.{2}.svc.%s.\n", derivedPrefix, c, domain)
	sb.WriteString("    }\n")
	fmt.Fprintf(&sb, "    template ANY ANY %s {\n        rcode NXDOMAIN\n    }\n", domain)
	fmt.Fprintf(&sb, "    kubernetes %s {\n", zone)
	for _, o := range k.Options {
		if connectionOptions[o[0]] {
			fmt.Fprintf(&sb, "        %s\n", strings.Join(o, " "))
		}
	}
	sb.WriteString("        ttl 5\n    }\n}\n")
	sb.WriteString(EndMarker + "\n")
	return sb.String(), nil
}

// Name is the clusterset DNS name of a service.
func Name(service, namespace, domain string) string {
	return service + "." + namespace + ".svc." + strings.TrimSuffix(domain, ".")
}
