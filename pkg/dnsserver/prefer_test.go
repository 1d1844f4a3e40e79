package dnsserver

import (
	"testing"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// The zone hints sync wrote on the copies reach the answers through the caches (pkg/member trims
// what it holds): a member that prefers its own endpoints gets those alone.
func TestCachesKeepTheHints(t *testing.T) {
	hint := func(s *discoveryv1.EndpointSlice, zone string) *discoveryv1.EndpointSlice {
		s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}}
		return s
	}
	m, _ := fakeMember(t, mcsapi.V1beta1, nil,
		serviceImport(mcsapi.V1beta1, "web", mcsv1beta1.Headless),
		hint(endpointSlice("web-member1", "web", "member1", true, "web-0", "10.11.0.1"), names.OtherClusterZone),
		hint(endpointSlice("web-member2", "web", "member2", true, "web-0", "10.12.0.1"), "zone-a"))
	s, _ := start(t, m)
	eventually(t, s, "web.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.12.0.1")
	eventually(t, s, "web-0.member1.web.demo.svc.clusterset.local.", dns.TypeA, "NOERROR 10.11.0.1")
}
