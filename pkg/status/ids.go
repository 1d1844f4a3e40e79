package status

import (
	"fmt"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// IDSources is the wide table's id-sources cell: where each member's ID came from
// (member1=clusterproperty, member2=flag, member3=context).
func IDSources(l *MultiClusterServiceStatusList) string {
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
		l.Items[i].DNSName = corefile.Name(l.Items[i].Name, l.Items[i].Namespace, strings.ToLower(domain))
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

// Names are the -o name lines of a status list, kind.group/name as kubectl's: one per
// multi-cluster service, named as its ServiceImport (the KEP's multi-cluster service object).
// Like kubectl get -A -o name, they carry no namespace.
func Names(l *MultiClusterServiceStatusList) []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, "serviceimport."+mcsapi.Group+"/"+it.Name)
	}
	return out
}

// KarmadaNames are the -o name lines of a Karmada control plane's view: its MultiClusterServices,
// ServiceExports and ServiceImports, in the order of the tables.
func KarmadaNames(l *KarmadaServiceStatusList) []string {
	var out []string
	for _, m := range l.MultiClusterServices {
		out = append(out, "multiclusterservice."+karmada.MultiClusterServices.Group+"/"+m.Name)
	}
	for _, s := range l.ServiceExports {
		out = append(out, "serviceexport."+mcsapi.Group+"/"+s.Name)
	}
	for _, s := range l.ServiceImports {
		out = append(out, "serviceimport."+mcsapi.Group+"/"+s.Name)
	}
	return out
}
