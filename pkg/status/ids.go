package status

import (
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/dns"
)

// ClusterIDs is the wide table's cluster-ids cell: every member's ID and where it came from.
func ClusterIDs(l *MultiClusterServiceStatusList) string {
	var ids []string
	for _, c := range l.Clusters {
		ids = append(ids, c.Name+"="+orNone(c.IDSource))
	}
	return joinOr(ids, "<none>")
}

func idSource(l *MultiClusterServiceStatusList, cluster string) string {
	for _, c := range l.Clusters {
		if c.Name == cluster {
			return orNone(c.IDSource)
		}
	}
	return "<none>"
}

// SetDNSNames fills every item's clusterset DNS name in domain.
func SetDNSNames(l *MultiClusterServiceStatusList, domain string) {
	for i := range l.Items {
		l.Items[i].DNSName = dns.Name(l.Items[i].Name, l.Items[i].Namespace, strings.ToLower(domain))
	}
}
