package corefile

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

const (
	// BeginMarker and EndMarker enclose the one server block kubectl-mcs owns in a Corefile.
	BeginMarker = "# kubectl-mcs:begin"
	EndMarker   = "# kubectl-mcs:end"

	// DefaultDomain is the clusterset zone of KEP-1645 and of the mcs-api conformance suite.
	DefaultDomain = "clusterset.local"
)

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

// Upstream is where our block forwards the zone: the DNS server of the member
// (`kubectl mcs dns-server`), which answers from the member's ServiceImports and EndpointSlices.
type Upstream struct {
	// Addr is IP:PORT, as ParseUpstream returns it: CoreDNS's forward takes no host names.
	Addr string
	// Service is "NAMESPACE/NAME" when Addr is that Service's ClusterIP; it is written as a
	// comment on the forward line, so that diagnose knows which Service to check.
	Service string
}

// serviceComment introduces Upstream.Service on the forward line.
const serviceComment = "# service "

// ParseUpstream checks a DNS server address, IP or IP:PORT ([IPv6]:PORT), and returns it as
// IP:PORT (port 53 when none is given).
func ParseUpstream(s string) (string, error) {
	host, port := s, "53"
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return "", fmt.Errorf("%q is not an IP address or IP:PORT (CoreDNS's forward takes no host names)", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, port)
	}
	return net.JoinHostPort(ip.Unmap().String(), port), nil
}

// Apply returns the Corefile with our block for domain, forwarding to up, replacing ours in place
// when present and appending it otherwise. It refuses a Corefile it cannot parse, one that serves
// domain, part of it or a zone under it outside our block (a *ServedError: see served.go for the
// rule), one whose zones a placeholder names, and one with no kubernetes plugin (not a cluster's
// CoreDNS; its server block's port is the one our block listens on).
func Apply(corefile, domain string, up Upstream) (string, error) {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	addr, err := ParseUpstream(up.Addr)
	if err != nil {
		return "", err
	}
	up.Addr = addr
	lines := strings.Split(corefile, "\n")
	b, e, err := span(lines)
	if err != nil {
		return "", err
	}
	rest := corefile
	if b >= 0 {
		rest = strings.Join(append(append([]string{}, lines[:b]...), lines[e+1:]...), "\n")
	}
	servers, err := read(rest, false)
	if err != nil {
		return "", fmt.Errorf("cannot parse the Corefile: %w", err)
	}
	if err := served(servers, domain); err != nil {
		return "", err
	}
	var host *Server
	for i, s := range servers {
		if host == nil && s.Find("kubernetes") != nil {
			host = &servers[i]
		}
	}
	if host == nil {
		return "", fmt.Errorf("no server block uses the kubernetes plugin: this is not a cluster's Corefile")
	}
	block := Block(domain, host.Port(), up)
	var out string
	if b >= 0 {
		out = strings.Join(append(append(append([]string{}, lines[:b]...), strings.Split(strings.TrimSuffix(block, "\n"), "\n")...), lines[e+1:]...), "\n")
	} else {
		if rest != "" && !strings.HasSuffix(rest, "\n") {
			rest += "\n"
		}
		out = rest + block
	}
	// Our block must read as a server block of its own: after a block without braces, or keys
	// without a body, CoreDNS would read it as part of theirs.
	if after, err := read(out, false); err != nil || len(after) != len(servers)+1 {
		return "", fmt.Errorf("the kubectl-mcs block would not be a server block of its own in this Corefile (a server block without braces?)")
	}
	return out, nil
}

// Check returns the error Apply gives for corefile and domain, whatever the upstream: init checks
// every member's Corefile before it reads (or waits for) the DNS servers.
func Check(corefile, domain string) error {
	_, err := Apply(corefile, domain, Upstream{Addr: "127.0.0.1"})
	return err
}

// Block renders our server block: the zone, on the port of the cluster's own block, forwarded to
// the member's DNS server. cache 5 matches the DNS server's TTL, so a change shows within seconds;
// denials are not cached (as kubeadm's Corefile does for cluster.local), so a name exported just
// after a client asked for it answers at once rather than after the negative TTL.
// No other plugin answers there: a local Service never answers a clusterset name. force_tcp:
// when a DNS server pod stops serving, kube-proxy clears the UDP flows to it, and a reply in
// flight then is lost (the client sees a timeout); it leaves TCP connections alone, the pod
// closes them as it exits, and forward retries a pooled connection found closed at once.
func Block(domain, port string, up Upstream) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (written by kubectl mcs init --dns; init --dns=false removes it)\n", BeginMarker)
	fmt.Fprintf(&sb, "%s:%s {\n", domain, port)
	sb.WriteString("    errors\n    cache 5 {\n        disable denial\n    }\n")
	fmt.Fprintf(&sb, "    forward . %s {", up.Addr)
	if up.Service != "" {
		sb.WriteString(" " + serviceComment + up.Service)
	}
	sb.WriteString("\n        force_tcp\n    }\n}\n" + EndMarker + "\n")
	return sb.String()
}

// Forward reads where our block forwards the zone. A Corefile without our block, or a block
// without a forward (written by a kubectl-mcs before the DNS server), is an error.
func Forward(corefile string) (Upstream, error) {
	lines := strings.Split(corefile, "\n")
	b, e, err := span(lines)
	if err != nil {
		return Upstream{}, err
	}
	if b < 0 {
		return Upstream{}, fmt.Errorf("no %q block", BeginMarker)
	}
	servers, err := read(strings.Join(lines[b+1:e], "\n"), false)
	if err != nil {
		return Upstream{}, fmt.Errorf("cannot parse the kubectl-mcs block: %w", err)
	}
	for _, s := range servers {
		d := s.Find("forward")
		if d == nil || len(d.Args) < 2 {
			continue
		}
		up := Upstream{Addr: shown(d.Args[1])}
		// The Service is a comment, which CoreDNS does not read: it is taken from the line.
		if _, svc, ok := strings.Cut(lines[b+1+d.Line], serviceComment); ok {
			up.Service = strings.TrimSpace(svc)
		}
		return up, nil
	}
	return Upstream{}, fmt.Errorf("the kubectl-mcs block forwards the zone nowhere (no forward line)")
}

// Name is the clusterset DNS name of a service.
func Name(service, namespace, domain string) string {
	return service + "." + namespace + ".svc." + strings.TrimSuffix(domain, ".")
}
