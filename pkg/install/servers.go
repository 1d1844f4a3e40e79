package install

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// InClusterServer is how the pods of a cluster reach their own apiserver: the kubernetes
// Service, whose name the apiserver's serving certificate holds (kube-apiserver's own
// certificate and kubeadm's both name kubernetes.default.svc).
const InClusterServer = "https://kubernetes.default.svc"

// ParseMemberServers reads --member-server's CTX=URL pairs: every URL http(s) with a host, each
// context once.
func ParseMemberServers(values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range values {
		ctx, addr, ok := strings.Cut(strings.TrimSpace(v), "=")
		if !ok || ctx == "" || addr == "" {
			return nil, fmt.Errorf("--member-server %q: want CTX=URL, e.g. member2=https://10.0.0.2:6443", v)
		}
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("--member-server %q: %q is not an http(s) URL with a host, e.g. https://10.0.0.2:6443", v, addr)
		}
		if _, dup := out[ctx]; dup {
			return nil, fmt.Errorf("--member-server: context %q given twice", ctx)
		}
		out[ctx] = addr
	}
	return out, nil
}

// Unreachable says why pods of another cluster cannot reach server: "loopback" (127.0.0.0/8,
// ::1, localhost), "link-local" (169.254.0.0/16, fe80::/10), "unspecified" (0.0.0.0, ::); "" when
// none of these. Only the address is judged: a name other than localhost is not resolved. The
// server is read as client-go reads it, a scheme-less HOST:PORT included (url.Parse fails on
// 127.0.0.1:6443 and takes localhost:6443 for a scheme; client-go dials https://HOST:PORT).
func Unreachable(server string) string {
	u, _, err := rest.DefaultServerURL(server, "", schema.GroupVersion{}, true)
	if err != nil {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "loopback"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsUnspecified():
		return "unspecified"
	}
	return ""
}

// ServerOf is a member as the address rule sees it: its context, its ID and the server its
// kubeconfig names.
type ServerOf struct {
	Context, ID, Server string
}

// Servers decides the API server address the pods of host use for each member, by member ID
// ("" keeps the kubeconfig's): given[context] as asked, with a warning when pods cannot reach
// it; the host's own apiserver by InClusterServer; any other member's kubeconfig server, refused
// when it is a loopback, link-local or unspecified address (every such member in one error). A
// context of given that is no member is refused too. host "" (per member) is the other members' pods: every member is judged, as
// its own pods never use these addresses.
func Servers(host string, members []ServerOf, given map[string]string) (map[string]string, []string, error) {
	pods := fmt.Sprintf("the sync pods in %q", host)
	if host == "" {
		pods = "the sync pods of the other members"
	}
	out := map[string]string{}
	var warnings, refused []string
	known := map[string]bool{}
	for _, m := range members {
		known[m.Context] = true
		if addr, ok := given[m.Context]; ok {
			if why := Unreachable(addr); why != "" {
				warnings = append(warnings, fmt.Sprintf("cluster %q: --member-server=%s=%s is a %s address, which %s cannot reach unless it is their own; taken as asked",
					m.ID, m.Context, addr, why, pods))
			}
			out[m.ID] = addr
			continue
		}
		if m.Context == host {
			out[m.ID] = InClusterServer
			continue
		}
		if why := Unreachable(m.Server); why != "" {
			refused = append(refused, fmt.Sprintf("cluster %q: its kubeconfig server %s is a %s address, which %s cannot reach: pass --member-server=%s=https://ADDRESS:PORT",
				m.ID, m.Server, why, pods, m.Context))
		}
		out[m.ID] = ""
	}
	// Every member at fault in one error, a line each: one run tells them all.
	switch len(refused) {
	case 0:
	case 1:
		return nil, nil, errors.New(refused[0])
	default:
		return nil, nil, fmt.Errorf("%d members' kubeconfig servers cannot be reached:\n  %s", len(refused), strings.Join(refused, "\n  "))
	}
	for _, ctx := range slices.Sorted(maps.Keys(given)) {
		if !known[ctx] {
			return nil, nil, fmt.Errorf("--member-server: context %q is not one of --contexts", ctx)
		}
	}
	return out, warnings, nil
}
