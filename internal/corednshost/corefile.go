// Package corednshost runs the Corefile a member's kube-system/coredns ConfigMap holds as a CoreDNS
// process on the test bed's host: the clusterset DNS tests and `make demo` query a real resolver
// configured by exactly what `kubectl mcs init --dns` wrote, forwarding the clusterset zone to a
// `kubectl mcs dns-server` on the host (WithForward).
package corednshost

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
)

// hostBound are plugins that listen on fixed host ports of their own (8080, 8181, 9153): several
// CoreDNS processes on one host would collide on them, and nothing here reads them.
var hostBound = map[string]bool{"health": true, "ready": true, "prometheus": true}

// ForHost turns an in-cluster Corefile into the one a host process runs: every server block
// listens on 127.0.0.1:port, every kubernetes plugin reaches the apiserver through kubeconfig and
// context, and the host-bound plugins are dropped. Everything else is kept line for line.
func ForHost(text, kubeconfig, context string, port int) (string, error) {
	servers, err := corefile.Parse(text)
	if err != nil {
		return "", err
	}
	lines := strings.Split(text, "\n")
	replace := map[int][]string{}
	drop := map[int]bool{}
	for _, s := range servers {
		var keys []string
		for _, z := range s.Zones() {
			keys = append(keys, fmt.Sprintf("%s:%d", z, port))
		}
		if s.First < 0 {
			return "", fmt.Errorf("server block %q: an import brought it, it has no lines of its own", strings.Join(s.Keys, " "))
		}
		if !strings.HasSuffix(strings.TrimSpace(lines[s.First]), "{") {
			return "", fmt.Errorf("line %d: server keys and '{' must share a line", s.First+1)
		}
		replace[s.First] = []string{strings.Join(keys, " ") + " {", "    bind 127.0.0.1"}
		for _, d := range s.Directives {
			switch {
			case hostBound[d.Name] || d.Name == "bind":
				for l := d.Line; l <= d.End; l++ {
					drop[l] = true
				}
			case d.Name == "kubernetes":
				opt := fmt.Sprintf("        kubeconfig %s %s", kubeconfig, context)
				if d.End > d.Line {
					replace[d.Line] = []string{lines[d.Line], opt}
				} else {
					replace[d.Line] = []string{"    kubernetes " + strings.Join(d.Args, " ") + " {", opt, "    }"}
				}
			}
		}
	}
	var out []string
	for i, l := range lines {
		switch {
		case drop[i]:
		case replace[i] != nil:
			out = append(out, replace[i]...)
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n"), nil
}

// WithForward points the kubectl-mcs block's forward at addr (IP:PORT): the member's Corefile
// forwards to its DNS server's Service, a ClusterIP the host cannot reach, and a test runs that
// DNS server on the host instead. The rest of the Corefile is kept line for line.
func WithForward(text, addr string) (string, error) {
	if _, err := corefile.Forward(text); err != nil {
		return "", err
	}
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, corefile.BeginMarker):
			in = true
		case strings.HasPrefix(t, corefile.EndMarker):
			in = false
		case in && strings.HasPrefix(t, "forward "):
			indent := l[:len(l)-len(strings.TrimLeftFunc(l, unicode.IsSpace))]
			brace := "" // its options' block opens on this line, after the address
			if code, _, _ := strings.Cut(t, "#"); strings.HasSuffix(strings.TrimSpace(code), "{") {
				brace = " {"
			}
			lines[i] = indent + "forward . " + addr + brace
		}
	}
	return strings.Join(lines, "\n"), nil
}
