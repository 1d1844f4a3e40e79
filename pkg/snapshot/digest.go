package snapshot

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The content of an EndpointSlice copy, as sync compares it: a digest. sync's caches hold the
// copies it wrote as their metadata and this digest (pkg/member's Trim), since all sync needs of
// a copy is whether it still says what sync wants: a copy whose digest differs from the wanted
// one's is rewritten, whoever changed it. The copies grow with members times exported
// endpoints; their metadata does not grow with endpoints.

// digestMark heads a digest where the cached form of a copy keeps it: metadata.selfLink, which no
// apiserver sets since Kubernetes 1.20 and which nothing here writes or reads otherwise.
const digestMark = "kubectl-mcs/digest:"

// SliceDigest is the digest of what sync compares of a slice: its endpoints' addresses, hostname,
// zone, conditions, hints, nodeName and targetRef, and its ports, in order, each as the apiserver
// returns what sync writes (an unset port protocol is TCP; an unset and an empty string are the
// same). Hints, nodeName and targetRef count only when set, so that the digest of a slice without
// them is what it was before they counted: an upgrade rewrites no copy. A copy never carries
// nodeName or targetRef, and hints only where the service's trafficDistribution or a member's
// choice asks for them: another writer's are corrected.
func SliceDigest(s *discoveryv1.EndpointSlice) string {
	if d, ok := strings.CutPrefix(s.SelfLink, digestMark); ok {
		return d
	}
	h := sha256.New()
	var n [8]byte
	num := func(v int) {
		binary.LittleEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	word := func(s string) { // length-prefixed: no two lists of words hash alike
		num(len(s))
		h.Write([]byte(s))
	}
	word(string(s.AddressType))
	num(len(s.Endpoints))
	for _, e := range s.Endpoints {
		num(len(e.Addresses))
		for _, a := range e.Addresses {
			word(a)
		}
		word(str(e.Hostname))
		word(str(e.Zone))
		// The extras extend the conditions' word, which is three characters without them.
		word(tri(e.Conditions.Ready) + tri(e.Conditions.Serving) + tri(e.Conditions.Terminating) + extras(&e))
	}
	num(len(s.Ports))
	for _, p := range s.Ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil && *p.Protocol != "" {
			proto = *p.Protocol
		}
		word(str(p.Name))
		word(string(proto))
		word(str(p.AppProtocol))
		if p.Port == nil {
			num(-1)
		} else {
			num(int(*p.Port))
		}
	}
	return base64.RawStdEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Digested reports whether s is a copy in its cached form: metadata and a digest, no content.
func Digested(s *discoveryv1.EndpointSlice) bool { return strings.HasPrefix(s.SelfLink, digestMark) }

// ToDigest puts s in its cached form, in place: its digest where its endpoints and ports were.
func ToDigest(s *discoveryv1.EndpointSlice) {
	d := SliceDigest(s)
	s.Endpoints, s.Ports = nil, nil
	s.SelfLink = digestMark + d
}

// extras renders an endpoint's hints, nodeName and targetRef, "" when it has none. Each part is
// length-prefixed, so no two endpoints render alike.
func extras(e *discoveryv1.Endpoint) string {
	var b strings.Builder
	part := func(tag string, vals ...string) {
		b.WriteString(tag)
		for _, v := range vals {
			fmt.Fprintf(&b, "%d:%s", len(v), v)
		}
		b.WriteByte(';')
	}
	if h := e.Hints; h != nil && len(h.ForZones)+len(h.ForNodes) > 0 {
		z := make([]string, 0, len(h.ForZones))
		for _, f := range h.ForZones {
			z = append(z, f.Name)
		}
		n := make([]string, 0, len(h.ForNodes))
		for _, f := range h.ForNodes {
			n = append(n, f.Name)
		}
		part("z", z...)
		part("n", n...)
	}
	if e.NodeName != nil && *e.NodeName != "" {
		part("N", *e.NodeName)
	}
	if t := e.TargetRef; t != nil {
		// What status --watch's caches keep of it (pkg/member's trim).
		part("T", t.Kind, t.Namespace, t.Name, string(t.UID))
	}
	return b.String()
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// tri writes an optional condition: unset, false or true.
func tri(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "t"
	}
	return "f"
}
