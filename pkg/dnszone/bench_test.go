package dnszone

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// BenchmarkAnswerHeadless is the A answer of a Headless service of 5,000 endpoints, and of one of
// them, fitted to 512 bytes as the server sends them over UDP.
func BenchmarkAnswerHeadless(b *testing.B) {
	var sl []*discoveryv1.EndpointSlice
	for s := range 5 {
		var eps []string
		for i := s * 1000; i < (s+1)*1000; i++ {
			eps = append(eps, fmt.Sprintf("web-%d=10.20.%d.%d", i, i/250, i%250+1))
		}
		x := slice("web", "member1", discoveryv1.AddressTypeIPv4, eps...)
		x.Name += fmt.Sprint(s)
		sl = append(sl, x)
	}
	src := NewState([]*mcsv1beta1.ServiceImport{imp("web", mcsv1beta1.Headless, nil, port("http", corev1.ProtocolTCP, 80))}, sl)
	for _, name := range []string{"web" + z, "web-4321.member1.web" + z} {
		q := new(dns.Msg).SetQuestion(name, dns.TypeA)
		b.Run(strings.SplitN(name, ".", 2)[0], func(b *testing.B) {
			for b.Loop() {
				r := Answer(q, src, Config{Domain: "clusterset.local"})
				Fit(r, Limit(q, false))
			}
		})
	}
}
