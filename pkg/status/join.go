package status

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/parallel"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

type key = types.NamespacedName

// index is one cluster's objects by namespace/name, its copies also by source cluster.
type index struct {
	*snapshot.Cluster
	*snapshot.Index
	copies map[key]map[string][]*discoveryv1.EndpointSlice
}

func newIndex(c *snapshot.Cluster) *index {
	if !c.HasData() {
		return &index{Cluster: c, Index: snapshot.NewIndex(&snapshot.Objects{})}
	}
	ix := &index{Cluster: c, Index: snapshot.NewIndex(&c.Objects), copies: map[key]map[string][]*discoveryv1.EndpointSlice{}}
	for k, l := range ix.Copies {
		for _, s := range l {
			if src := s.Labels[mcsv1beta1.LabelSourceCluster]; src != "" {
				if ix.copies[k] == nil {
					ix.copies[k] = map[string][]*discoveryv1.EndpointSlice{}
				}
				ix.copies[k][src] = append(ix.copies[k][src], s)
			}
		}
	}
	return ix
}

func (ix *index) hasNamespace(ns string) bool { return ix.NamespacesUnknown || ix.Index.Namespaces[ns] }

// Build joins the clusters into the status list. Clusters keep their order; items are sorted.
func Build(clusters []snapshot.Cluster) *MultiClusterServiceStatusList {
	out := &MultiClusterServiceStatusList{Clusters: []ClusterInfo{}, Items: []MultiClusterServiceStatus{}}
	out.APIVersion, out.Kind = APIVersion, KindList
	idx := make([]*index, len(clusters))
	parallel.For(len(clusters), func(i int) { idx[i] = newIndex(&clusters[i]) })
	obs := engine.Observed{}
	keys := map[key]bool{}
	for i := range clusters {
		c := &clusters[i]
		out.Clusters = append(out.Clusters, ClusterInfo{Name: c.ID, Context: c.Context, State: c.State, Message: c.Message, MCSAPIVersion: c.MCSAPIVersion, IDSource: c.IDSource})
		if !c.HasData() {
			continue
		}
		for k := range idx[i].Exports {
			keys[k] = true
		}
		for k := range idx[i].Imports {
			keys[k] = true
		}
		obs.Clusters = append(obs.Clusters, engine.ObservedCluster{ID: c.ID, Reachable: c.State == snapshot.Reachable,
			Objects: snapshot.Objects{ServiceExports: c.ServiceExports, Services: c.Services, EndpointSlices: c.EndpointSlices}})
	}
	summaries := map[key]engine.Summary{}
	for _, s := range engine.Summarize(obs) {
		summaries[key{Namespace: s.Namespace, Name: s.Name}] = s
	}
	sorted := make([]key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	// Items only read the shared indexes: at 10,000 services the join is a second of CPU, and
	// the read leaves the other CPUs idle by then.
	out.Items = make([]MultiClusterServiceStatus, len(sorted))
	want := computeWanted(clusters, sorted)
	parallel.For(len(sorted), func(i int) { out.Items[i] = buildItem(sorted[i], idx, summaries[sorted[i]], want) })
	return out
}

// item builds one service's status in named steps, in this order: who exports, type and ports,
// conflicts, endpoints per exporter, the per-cluster breakdown (with the copies' freshness), the
// stale copies, then the problems, age and health that follow from them.
type item struct {
	k        key
	idx      []*index
	byID     map[string]*index
	sum      engine.Summary
	want     wanted
	out      MultiClusterServiceStatus
	problems []string
	valid    map[string]bool
	// missing and noIP are the reachable clusters without an import, or with one without an IP;
	// noNamespace those that cannot import it, lacking the namespace.
	missing, noIP, noNamespace []string
	terminating                bool
	totalReady                 int
}

func buildItem(k key, idx []*index, sum engine.Summary, want wanted) MultiClusterServiceStatus {
	b := &item{k: k, idx: idx, sum: sum, want: want, byID: map[string]*index{}, valid: map[string]bool{},
		out: MultiClusterServiceStatus{Namespace: k.Namespace, Name: k.Name, Ports: []Port{},
			DNSName:           corefile.Name(k.Name, k.Namespace, corefile.DefaultDomain),
			ExportingClusters: []string{}, ImportingClusters: []string{}, Endpoints: []SourceEndpoints{},
			Conflicts: []ConflictStatus{}, Clusters: []ClusterStatus{}}}
	for _, ix := range idx {
		b.byID[ix.ID] = ix
	}
	b.exporting()
	b.typeAndPorts()
	b.conflicts()
	b.endpoints()
	invalid := map[string]engine.InvalidExport{}
	for _, inv := range sum.Invalid {
		invalid[inv.Cluster] = inv
	}
	for _, ix := range idx {
		b.out.Clusters = append(b.out.Clusters, b.cluster(ix, invalid))
	}
	b.staleCopies()
	b.trafficChoices()
	b.summarize()
	b.age()
	b.out.Problems = b.problems
	// b.out.Notes (trafficChoices) leave the health alone.
	switch {
	case len(b.out.Conflicts) > 0:
		b.out.Health = Conflict
	case len(b.problems) == 1 && b.problems[0] == unreadExporters(b.out.UnreadExporters):
		b.out.Health = Unknown // exported, if at all, only where this read does not look
	case len(b.problems) > 0:
		b.out.Health = Degraded
	default:
		b.out.Health = Healthy
	}
	return b.out
}

// exporting: the valid exports, plus clusters we cannot read that the others' imports name as
// sources; the clusters outside this read that they name, apart.
func (b *item) exporting() {
	exporting, outside := map[string]bool{}, map[string]bool{}
	for _, id := range b.sum.Exporting {
		exporting[id], b.valid[id] = true, true
	}
	for _, ix := range b.idx {
		var named []string
		if si := ix.Imports[b.k]; si != nil {
			for _, c := range si.Status.Clusters {
				named = append(named, c.Cluster)
			}
		}
		for src := range ix.copies[b.k] {
			named = append(named, src)
		}
		for _, src := range named {
			switch o := b.byID[src]; {
			case o == nil:
				outside[src] = true
			case !o.HasData():
				exporting[src] = true
			}
		}
	}
	for id := range exporting {
		b.out.ExportingClusters = append(b.out.ExportingClusters, id)
	}
	sort.Strings(b.out.ExportingClusters)
	for id := range outside {
		b.out.UnreadExporters = append(b.out.UnreadExporters, id)
	}
	sort.Strings(b.out.UnreadExporters)
}

// typeAndPorts: the merged decision, else what the imports say.
func (b *item) typeAndPorts() {
	b.out.Type = string(b.sum.Type)
	for _, p := range b.sum.Ports {
		b.out.Ports = append(b.out.Ports, toPort(p))
	}
	var first *mcsv1beta1.ServiceImport
	for _, ix := range b.idx {
		if si := ix.Imports[b.k]; si != nil {
			b.out.ImportingClusters = append(b.out.ImportingClusters, ix.ID)
			if first == nil {
				first = si
			}
		}
	}
	sort.Strings(b.out.ImportingClusters)
	if b.out.Type == "" && first != nil {
		b.out.Type = string(first.Spec.Type)
		for _, p := range first.Spec.Ports {
			b.out.Ports = append(b.out.Ports, toPort(p))
		}
	}
}

func (b *item) conflicts() {
	for _, c := range b.sum.Conflicts {
		cs := ConflictStatus{Reason: c.Reason, Winner: c.Winner, Disagreeing: append([]string{}, c.Disagreeing...),
			Losing: append([]LosingExport{}, c.Losing...), Unanswered: c.Unanswered, Message: c.Message}
		b.out.Conflicts = append(b.out.Conflicts, cs)
		b.problems = append(b.problems, c.Message)
	}
}

// endpoints per exporting cluster: its own slices, or the copies others hold when it cannot be
// read.
func (b *item) endpoints() {
	for _, id := range b.out.ExportingClusters {
		ix := b.byID[id]
		e := SourceEndpoints{Cluster: id}
		if ix.State == snapshot.Reachable {
			e.Ready, e.Total = count(ix.Sources[b.k])
		} else {
			e.LastKnown = true
			if ix.LastKnown {
				e.Ready, e.Total = count(ix.Sources[b.k])
			} else {
				for _, o := range b.idx {
					if r, t := count(o.copies[b.k][id]); t > e.Total {
						e.Ready, e.Total = r, t
					}
				}
			}
			b.problems = append(b.problems, fmt.Sprintf("Cluster %q exports it but %s: its endpoints are last known.", id, unreadable(ix.State)))
		}
		b.totalReady += e.Ready
		b.out.Endpoints = append(b.out.Endpoints, e)
	}
}

// summarize states what is wrong with the service as a whole.
func (b *item) summarize() {
	out := &b.out
	switch {
	case len(out.ExportingClusters) == 0 && len(b.sum.Invalid) > 0:
		b.problems = append(b.problems, "No valid export in any cluster.")
	case len(out.ExportingClusters) == 0 && b.terminating:
		b.problems = append(b.problems, "Its exports are being deleted.")
	case len(out.ExportingClusters) == 0 && len(out.UnreadExporters) > 0:
		b.problems = append(b.problems, unreadExporters(out.UnreadExporters))
	case len(out.ExportingClusters) == 0:
		b.problems = append(b.problems, fmt.Sprintf("No cluster exports it: the ServiceImports in %s are left over.", quoteJoin(out.ImportingClusters)))
	case len(out.ImportingClusters) == 0:
		b.problems = append(b.problems, "Not imported in any cluster: no MCS controller has synced it (is sync running?).")
	default:
		if len(b.missing) > 0 {
			b.problems = append(b.problems, fmt.Sprintf("Not imported in %s, which %s the namespace.", quoteJoin(b.missing), plural(len(b.missing), "has", "have")))
		}
		if len(b.noIP) > 0 {
			b.problems = append(b.problems, fmt.Sprintf("The ServiceImport in %s has no clusterset IP yet.", quoteJoin(b.noIP)))
		}
		if len(b.noNamespace) > 0 {
			b.problems = append(b.problems, "N"+strings.TrimPrefix(engine.NoNamespaceMessage(b.k.Namespace, b.noNamespace), "n")+".")
		}
	}
	if len(out.ExportingClusters) > 0 && b.totalReady == 0 {
		b.problems = append(b.problems, "No ready endpoints in any exporting cluster.")
	}
}

// age: the oldest export, else the oldest import.
func (b *item) age() {
	ts := &b.out.CreationTimestamp
	for _, ix := range b.idx {
		if exp := ix.Exports[b.k]; exp != nil && (ts.IsZero() || exp.CreationTimestamp.Before(ts)) {
			*ts = exp.CreationTimestamp
		}
	}
	if !ts.IsZero() {
		return
	}
	for _, ix := range b.idx {
		if si := ix.Imports[b.k]; si != nil && (ts.IsZero() || si.CreationTimestamp.Before(ts)) {
			*ts = si.CreationTimestamp
		}
	}
}

func unreadable(s snapshot.State) string {
	switch s {
	case snapshot.Unreachable:
		return "is unreachable"
	case snapshot.NoCRDs:
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

// unreadExporters says that only clusters outside this read are named as the service's sources.
func unreadExporters(ids []string) string {
	return fmt.Sprintf("No cluster of this read exports it; its imports name %s as %s, outside this read (--contexts): whether %s still %s it cannot be known here.",
		quoteJoin(ids), plural(len(ids), "a source", "sources"), plural(len(ids), "it", "they"), plural(len(ids), "exports", "export"))
}
