package status

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/dns"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// Cluster is what was read from one member: every object of the listed kinds in the namespace
// (or all namespaces) shown.
type Cluster struct {
	ID, Context   string
	State         ClusterState
	Message       string
	MCSAPIVersion string
	IDSource      string
	// LastKnown: State is not Reachable but the objects below are the last ones seen (--watch
	// keeps its caches); they are shown, flagged as last known.
	LastKnown bool
	// Namespaces are the cluster's namespaces; NamespacesUnknown when they could not be listed.
	Namespaces        []string
	NamespacesUnknown bool

	ServiceExports []*mcsv1beta1.ServiceExport
	ServiceImports []*mcsv1beta1.ServiceImport
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
}

// hasData says whether the cluster's objects take part.
func (c *Cluster) hasData() bool { return c.State == ClusterReachable || c.LastKnown }

type key = types.NamespacedName

// index is one cluster's objects by namespace/name.
type index struct {
	*Cluster
	namespaces map[string]bool
	exports    map[key]*mcsv1beta1.ServiceExport
	imports    map[key]*mcsv1beta1.ServiceImport
	services   map[key]*corev1.Service
	// sources are the slices of the cluster's own Services (kubernetes.io/service-name), never
	// the copies any MCS controller made.
	sources map[key][]*discoveryv1.EndpointSlice
	// copies are imported slices by service and source cluster.
	copies map[key]map[string][]*discoveryv1.EndpointSlice
}

func newIndex(c *Cluster) *index {
	ix := &index{Cluster: c, namespaces: map[string]bool{},
		exports: map[key]*mcsv1beta1.ServiceExport{}, imports: map[key]*mcsv1beta1.ServiceImport{},
		services: map[key]*corev1.Service{}, sources: map[key][]*discoveryv1.EndpointSlice{},
		copies: map[key]map[string][]*discoveryv1.EndpointSlice{}}
	if !c.hasData() {
		return ix
	}
	for _, n := range c.Namespaces {
		ix.namespaces[n] = true
	}
	for _, o := range c.ServiceExports {
		ix.exports[key{Namespace: o.Namespace, Name: o.Name}] = o
	}
	for _, o := range c.ServiceImports {
		ix.imports[key{Namespace: o.Namespace, Name: o.Name}] = o
	}
	for _, o := range c.Services {
		ix.services[key{Namespace: o.Namespace, Name: o.Name}] = o
	}
	for _, s := range c.EndpointSlices {
		if svc, src := s.Labels[mcsv1beta1.LabelServiceName], s.Labels[mcsv1beta1.LabelSourceCluster]; svc != "" && src != "" {
			k := key{Namespace: s.Namespace, Name: svc}
			if ix.copies[k] == nil {
				ix.copies[k] = map[string][]*discoveryv1.EndpointSlice{}
			}
			ix.copies[k][src] = append(ix.copies[k][src], s)
			continue
		}
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" && !names.IsManaged(s.Labels) {
			k := key{Namespace: s.Namespace, Name: svc}
			ix.sources[k] = append(ix.sources[k], s)
		}
	}
	return ix
}

func (ix *index) hasNamespace(ns string) bool { return ix.NamespacesUnknown || ix.namespaces[ns] }

// Build joins the clusters into the status list. Clusters keep their order; items are sorted.
func Build(clusters []Cluster) *MultiClusterServiceStatusList {
	out := &MultiClusterServiceStatusList{Clusters: []ClusterInfo{}, Items: []MultiClusterServiceStatus{}}
	out.APIVersion, out.Kind = APIVersion, KindList
	idx := make([]*index, len(clusters))
	obs := engine.Observed{}
	keys := map[key]bool{}
	for i := range clusters {
		c := &clusters[i]
		out.Clusters = append(out.Clusters, ClusterInfo{Name: c.ID, Context: c.Context, State: c.State, Message: c.Message, MCSAPIVersion: c.MCSAPIVersion, IDSource: c.IDSource})
		idx[i] = newIndex(c)
		if !c.hasData() {
			continue
		}
		for k := range idx[i].exports {
			keys[k] = true
		}
		for k := range idx[i].imports {
			keys[k] = true
		}
		obs.Clusters = append(obs.Clusters, engine.ClusterState{ID: c.ID, Reachable: c.State == ClusterReachable,
			ServiceExports: c.ServiceExports, Services: c.Services})
	}
	summaries := map[key]engine.Summary{}
	for _, s := range engine.Summarize(obs) {
		summaries[key{Namespace: s.Namespace, Name: s.Name}] = s
	}
	for k := range keys {
		out.Items = append(out.Items, buildItem(k, idx, summaries[k]))
	}
	sort.Slice(out.Items, func(i, j int) bool {
		a, b := out.Items[i], out.Items[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

func buildItem(k key, idx []*index, sum engine.Summary) MultiClusterServiceStatus {
	item := MultiClusterServiceStatus{Namespace: k.Namespace, Name: k.Name, Ports: []Port{},
		DNSName:           dns.Name(k.Name, k.Namespace, dns.DefaultDomain),
		ExportingClusters: []string{}, ImportingClusters: []string{}, Endpoints: []SourceEndpoints{},
		Conflicts: []ConflictStatus{}, Clusters: []ClusterStatus{}}
	var problems []string
	invalid := map[string]engine.InvalidExport{}
	for _, inv := range sum.Invalid {
		invalid[inv.Cluster] = inv
	}
	byID := map[string]*index{}
	for _, ix := range idx {
		byID[ix.ID] = ix
	}

	// Exporting clusters: the valid exports, plus clusters we cannot read that the others'
	// imports name as sources.
	exporting, valid := map[string]bool{}, map[string]bool{}
	for _, id := range sum.Exporting {
		exporting[id], valid[id] = true, true
	}
	for _, ix := range idx {
		si := ix.imports[k]
		var named []string
		if si != nil {
			for _, c := range si.Status.Clusters {
				named = append(named, c.Cluster)
			}
		}
		for src := range ix.copies[k] {
			named = append(named, src)
		}
		for _, src := range named {
			if o := byID[src]; o != nil && !o.hasData() {
				exporting[src] = true
			}
		}
	}
	for id := range exporting {
		item.ExportingClusters = append(item.ExportingClusters, id)
	}
	sort.Strings(item.ExportingClusters)

	// Type and ports: the merged decision, else what the imports say.
	item.Type = string(sum.Type)
	for _, p := range sum.Ports {
		item.Ports = append(item.Ports, toPort(p))
	}
	var firstImport *mcsv1beta1.ServiceImport
	for _, ix := range idx {
		if si := ix.imports[k]; si != nil {
			item.ImportingClusters = append(item.ImportingClusters, ix.ID)
			if firstImport == nil {
				firstImport = si
			}
		}
	}
	sort.Strings(item.ImportingClusters)
	if item.Type == "" && firstImport != nil {
		item.Type = string(firstImport.Spec.Type)
		for _, p := range firstImport.Spec.Ports {
			item.Ports = append(item.Ports, toPort(p))
		}
	}

	for _, c := range sum.Conflicts {
		item.Conflicts = append(item.Conflicts, ConflictStatus{Reason: c.Reason, Winner: c.Winner,
			Disagreeing: append([]string{}, c.Disagreeing...), Message: c.Message})
		problems = append(problems, c.Message)
	}

	// Endpoints per exporting cluster: its own slices, or the copies others hold when it cannot
	// be read.
	totalReady := 0
	for _, id := range item.ExportingClusters {
		ix := byID[id]
		e := SourceEndpoints{Cluster: id}
		if ix.State == ClusterReachable {
			e.Ready, e.Total = count(ix.sources[k])
		} else {
			e.LastKnown = true
			if ix.LastKnown {
				e.Ready, e.Total = count(ix.sources[k])
			} else {
				for _, o := range idx {
					if r, t := count(o.copies[k][id]); t > e.Total {
						e.Ready, e.Total = r, t
					}
				}
			}
			problems = append(problems, fmt.Sprintf("Cluster %q exports it but %s: its endpoints are last known.", id, unreadable(ix.State)))
		}
		totalReady += e.Ready
		item.Endpoints = append(item.Endpoints, e)
	}

	// Per-cluster breakdown.
	var missing, noIP []string
	terminating := false
	for _, ix := range idx {
		cs := ClusterStatus{Cluster: ix.ID, State: ix.State}
		switch ix.State {
		case ClusterUnreachable:
			cs.ImportState = ImportUnreachable
		case ClusterNoCRDs:
			cs.ImportState = ImportNoCRDs
		case ClusterError:
			cs.ImportState = ImportError
		}
		if !ix.hasData() {
			item.Clusters = append(item.Clusters, cs)
			continue
		}
		cs.NamespaceExists = ix.hasNamespace(k.Namespace)
		if exp := ix.exports[k]; exp != nil {
			es := &ExportStatus{Valid: valid[ix.ID], CreationTimestamp: exp.CreationTimestamp,
				Terminating: exp.DeletionTimestamp != nil, Managed: names.IsManaged(exp.Labels), Conditions: exp.Status.Conditions}
			if es.Conditions == nil {
				es.Conditions = []metav1.Condition{}
			}
			if inv, ok := invalid[ix.ID]; ok {
				es.InvalidReason = inv.Reason
				problems = append(problems, fmt.Sprintf("The export in cluster %q is not valid (%s): %s", ix.ID, inv.Reason, inv.Message))
			} else if es.Terminating {
				es.InvalidReason = "Terminating"
				terminating = true
			}
			cs.Export = es
		}
		if svc := ix.services[k]; svc != nil && !names.IsManaged(svc.Labels) {
			cs.Service = &ServiceStatus{Type: serviceType(svc), ClusterIPs: svc.Spec.ClusterIPs}
			r, t := count(ix.sources[k])
			cs.Endpoints = &SourceEndpoints{Cluster: ix.ID, Ready: r, Total: t, LastKnown: ix.State != ClusterReachable}
		}
		if si := ix.imports[k]; si != nil {
			is := &ImportStatus{Type: string(si.Spec.Type), IPs: si.Spec.IPs, Ports: []Port{}, Sources: []string{},
				Managed: names.IsManaged(si.Labels), Conditions: si.Status.Conditions}
			for _, p := range si.Spec.Ports {
				is.Ports = append(is.Ports, toPort(p))
			}
			for _, c := range si.Status.Clusters {
				is.Sources = append(is.Sources, c.Cluster)
			}
			is.DerivedService = si.Annotations[names.DerivedServiceAnnotation]
			if is.DerivedService == "" && is.Managed {
				is.DerivedService = names.DerivedServiceName(k.Name)
			}
			if d := ix.services[key{Namespace: k.Namespace, Name: is.DerivedService}]; is.DerivedService != "" && d != nil {
				is.DerivedServiceExists = true
				for _, ip := range d.Spec.ClusterIPs {
					if ip != corev1.ClusterIPNone {
						is.DerivedServiceIPs = append(is.DerivedServiceIPs, ip)
					}
				}
			}
			cs.Import = is
			cs.ImportState = ImportReady
			if si.Spec.Type == mcsv1beta1.ClusterSetIP && len(si.Spec.IPs) == 0 {
				cs.ImportState = ImportNoIP
				if ix.State == ClusterReachable {
					noIP = append(noIP, ix.ID)
				}
			}
		} else if cs.NamespaceExists {
			cs.ImportState = ImportMissing
			if ix.State == ClusterReachable {
				missing = append(missing, ix.ID)
			}
		} else {
			cs.ImportState = ImportNoNamespace
		}
		if ix.State != ClusterReachable {
			cs.ImportState = ImportUnreachable
		}
		srcs := make([]string, 0, len(ix.copies[k]))
		for src := range ix.copies[k] {
			srcs = append(srcs, src)
		}
		sort.Strings(srcs)
		for _, src := range srcs {
			r, t := count(ix.copies[k][src])
			cs.ImportedEndpoints = append(cs.ImportedEndpoints, SourceEndpoints{Cluster: src, Ready: r, Total: t})
		}
		item.Clusters = append(item.Clusters, cs)
	}

	switch {
	case len(item.ExportingClusters) == 0 && len(sum.Invalid) > 0:
		problems = append(problems, "No valid export in any cluster.")
	case len(item.ExportingClusters) == 0 && terminating:
		problems = append(problems, "Its exports are being deleted.")
	case len(item.ExportingClusters) == 0:
		problems = append(problems, fmt.Sprintf("No cluster exports it: the ServiceImports in %s are left over.", quoteJoin(item.ImportingClusters)))
	case len(item.ImportingClusters) == 0:
		problems = append(problems, "Not imported in any cluster: no MCS controller has synced it (kubectl mcs sync).")
	default:
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("Not imported in %s, which %s the namespace.", quoteJoin(missing), plural(len(missing), "has", "have")))
		}
		if len(noIP) > 0 {
			problems = append(problems, fmt.Sprintf("The ServiceImport in %s has no clusterset IP yet.", quoteJoin(noIP)))
		}
	}
	if len(item.ExportingClusters) > 0 && totalReady == 0 {
		problems = append(problems, "No ready endpoints in any exporting cluster.")
	}

	// Age: the oldest export, else the oldest import.
	for _, ix := range idx {
		if exp := ix.exports[k]; exp != nil && (item.CreationTimestamp.IsZero() || exp.CreationTimestamp.Before(&item.CreationTimestamp)) {
			item.CreationTimestamp = exp.CreationTimestamp
		}
	}
	if item.CreationTimestamp.IsZero() {
		for _, ix := range idx {
			if si := ix.imports[k]; si != nil && (item.CreationTimestamp.IsZero() || si.CreationTimestamp.Before(&item.CreationTimestamp)) {
				item.CreationTimestamp = si.CreationTimestamp
			}
		}
	}

	item.Problems = problems
	switch {
	case len(item.Conflicts) > 0:
		item.Health = Conflict
	case len(problems) > 0:
		item.Health = Degraded
	default:
		item.Health = Healthy
	}
	return item
}

func unreadable(s ClusterState) string {
	switch s {
	case ClusterUnreachable:
		return "is unreachable"
	case ClusterNoCRDs:
		return "has no mcs-api CRDs"
	}
	return "could not be read"
}

func toPort(p mcsv1beta1.ServicePort) Port {
	out := Port{Name: p.Name, Protocol: string(p.Protocol), Port: p.Port}
	if out.Protocol == "" {
		out.Protocol = string(corev1.ProtocolTCP)
	}
	if p.AppProtocol != nil {
		out.AppProtocol = *p.AppProtocol
	}
	return out
}

func serviceType(s *corev1.Service) string {
	if s.Spec.ClusterIP == corev1.ClusterIPNone {
		return "Headless"
	}
	if s.Spec.Type == "" {
		return string(corev1.ServiceTypeClusterIP)
	}
	return string(s.Spec.Type)
}

// count returns the ready and total endpoints of slices. An endpoint in several slices (a
// dual-stack pod, a slice being replaced) counts once: by its target, else its addresses.
func count(slices []*discoveryv1.EndpointSlice) (ready, total int) {
	seen := map[string]bool{}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			id := strings.Join(e.Addresses, ",")
			if t := e.TargetRef; t != nil && (t.UID != "" || t.Name != "") {
				id = t.Kind + "/" + t.Namespace + "/" + t.Name + "/" + string(t.UID)
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			total++
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready++
			}
		}
	}
	return ready, total
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
