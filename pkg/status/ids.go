package status

import (
	"fmt"
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

// NotFound is the error of status SERVICE and diagnose SERVICE when no member read holds an
// export or import of it (a typo, or the right name in another namespace), as kubectl get's.
func NotFound(namespace, name string, clusters []ClusterInfo) error {
	ids := make([]string, 0, len(clusters))
	for _, c := range clusters {
		ids = append(ids, c.Name)
	}
	return fmt.Errorf("service %s/%s is neither exported nor imported in any cluster that could be read (%s)", namespace, name, strings.Join(ids, ", "))
}
