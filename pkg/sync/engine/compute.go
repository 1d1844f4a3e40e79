package engine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

type key = types.NamespacedName

// clusterIndex is one cluster's objects by namespace/name (snapshot.Index), as the engine reads
// them: exports without the terminating ones (already unexported as far as consumers are
// concerned), and copies that are ours only.
type clusterIndex struct {
	*ClusterState
	namespaces map[string]bool
	exports    map[key]*mcsv1beta1.ServiceExport
	services   map[key]*corev1.Service
	imports    map[key]*mcsv1beta1.ServiceImport
	slices     map[key]*discoveryv1.EndpointSlice
	sources    map[key][]*discoveryv1.EndpointSlice
	copies     map[key][]*discoveryv1.EndpointSlice
}

func indexClusters(obs Observed) []*clusterIndex {
	out := make([]*clusterIndex, 0, len(obs.Clusters))
	for i := range obs.Clusters {
		c := &obs.Clusters[i]
		ix := snapshot.NewIndex(&c.Objects)
		ci := &clusterIndex{ClusterState: c, namespaces: ix.Namespaces, exports: ix.Exports, services: ix.Services,
			imports: ix.Imports, slices: ix.Slices, sources: ix.Sources, copies: ix.Copies}
		for k, o := range ix.Exports {
			if o.DeletionTimestamp != nil {
				delete(ci.exports, k)
			}
		}
		for k, l := range ix.Copies {
			ours := slices.DeleteFunc(slices.Clone(l), func(s *discoveryv1.EndpointSlice) bool { return !names.IsManaged(s.Labels) })
			if len(ours) == 0 {
				delete(ci.copies, k)
			} else {
				ci.copies[k] = ours
			}
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// membership says, for a source cluster ID, whether what the clusterset recorded about it
// stands: it does for every cluster that was not read, unless it was evicted.
type membership struct {
	read, evicted, members map[string]bool
}

func newMembership(obs Observed) membership {
	m := membership{read: map[string]bool{}, evicted: map[string]bool{}}
	for _, c := range obs.Clusters {
		m.read[c.ID] = true
	}
	for _, id := range obs.Evicted {
		m.evicted[id] = true
	}
	if obs.Members != nil {
		m.members = map[string]bool{}
		for _, id := range obs.Members {
			m.members[id] = true
		}
	}
	return m
}

func (m membership) unread(id string) bool { return id != "" && !m.read[id] && !m.evicted[id] }

func (m membership) outside(id string) bool { return m.members != nil && !m.members[id] }

// heldSources are the unread source clusters that ci's own records of k name, sorted.
func (m membership) heldSources(ci *clusterIndex, k key) []string {
	set := map[string]bool{}
	if imp := ci.imports[k]; imp != nil && names.IsManaged(imp.Labels) {
		for _, c := range imp.Status.Clusters {
			if m.unread(c.Cluster) {
				set[c.Cluster] = true
			}
		}
	}
	for _, s := range ci.copies[k] {
		if src := s.Labels[mcsv1beta1.LabelSourceCluster]; m.unread(src) {
			set[src] = true
		}
	}
	return sortedKeys(set)
}

func sortedKeys(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }

// exportedKeys are the services some cluster exports, sorted by namespace then name.
func exportedKeys(idx []*clusterIndex) []key {
	keySet := map[key]bool{}
	for _, ci := range idx {
		for k := range ci.exports {
			keySet[k] = true
		}
	}
	return sortKeys(keySet)
}

// sortKeys orders services by namespace, then name.
func sortKeys(keySet map[key]bool) []key {
	return slices.SortedFunc(maps.Keys(keySet), func(a, b key) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
}

// decidedKeys are the services obs decides: its scope when set, else every service exported or
// still recorded by an import or slice of ours.
func decidedKeys(obs Observed, idx []*clusterIndex) []key {
	keySet := map[key]bool{}
	if obs.Services != nil {
		for _, k := range obs.Services {
			keySet[k] = true
		}
		return sortKeys(keySet)
	}
	for _, ci := range idx {
		for k := range ci.exports {
			keySet[k] = true
		}
		for k, imp := range ci.imports {
			if names.IsManaged(imp.Labels) {
				keySet[k] = true
			}
		}
		for k := range ci.copies {
			keySet[k] = true
		}
	}
	return sortKeys(keySet)
}

// inScope reports whether obs decides service k.
func inScope(obs Observed, k key) bool {
	if obs.Services == nil {
		return true
	}
	for _, s := range obs.Services {
		if s == k {
			return true
		}
	}
	return false
}

// Compute merges the observed clusters into the desired state. It is deterministic: the order of
// clusters and of objects within them does not change the result.
func Compute(obs Observed) Desired {
	idx := indexClusters(obs)
	mem := newMembership(obs)
	d := Desired{Clusters: map[string]*ClusterDesired{}}
	for _, ci := range idx {
		if ci.Reachable {
			d.Clusters[ci.ID] = &ClusterDesired{ExportConditions: map[key][]metav1.Condition{}}
		}
	}

	for _, k := range decidedKeys(obs, idx) {
		computeService(obs.Now, idx, mem, &d, k)
	}

	slices.SortStableFunc(d.Conflicts, CompareConflicts)
	for _, cd := range d.Clusters {
		sortDesired(cd)
	}
	return d
}

func computeService(now metav1.Time, idx []*clusterIndex, mem membership, d *Desired, k key) {
	var cons []constituent
	for _, ci := range idx {
		exp := ci.exports[k]
		if exp == nil {
			continue
		}
		svc := ci.services[k]
		var invalid *metav1.Condition
		if reason, msg := exportInvalid(k, svc); reason != "" {
			invalid = &metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, Message: msg}
		}
		if invalid == nil {
			cons = append(cons, constituent{cluster: ci.ID, export: exp, svc: svc})
			continue
		}
		if ci.Reachable {
			// Only Valid: Ready and Conflict say nothing about an export that is not part of the
			// service, and Plan removes stale ones.
			invalid.Type = string(mcsv1beta1.ServiceExportConditionValid)
			d.Clusters[ci.ID].ExportConditions[k] = pruneConditions(ci, exp, resolveConditions(exp, now, []metav1.Condition{*invalid}))
		}
	}
	if len(cons) == 0 {
		// Nothing read exports it: Plan deletes what we wrote for it, except what stands for
		// clusters that were not read.
		for _, ci := range idx {
			if cd := d.Clusters[ci.ID]; cd != nil {
				holdOnly(ci, cd, mem, k)
			}
		}
		return
	}
	sortConstituents(cons)
	m := mergeConstituents(k.Namespace, k.Name, cons)
	d.Conflicts = append(d.Conflicts, m.conflicts...)

	exporting := make([]string, len(cons))
	for i, c := range cons {
		exporting[i] = c.cluster
	}
	sort.Strings(exporting)

	derived := names.DerivedServiceName(k.Name)
	dk := key{Namespace: k.Namespace, Name: derived}
	var importers, pending, foreign []string
	for _, ci := range idx {
		if !ci.Reachable || !ci.namespaces[k.Namespace] {
			continue
		}
		importers = append(importers, ci.ID)
		cd := d.Clusters[ci.ID]
		imp := ci.imports[k]
		if imp != nil && !names.IsManaged(imp.Labels) {
			cd.Skipped = append(cd.Skipped, Skip{Kind: KindServiceImport, Namespace: k.Namespace, Name: k.Name,
				Message: "ServiceImport exists and is not managed by kubectl-mcs; not importing here"})
			foreign = append(foreign, ci.ID)
			continue
		}
		if s := ci.services[dk]; s != nil && !names.IsManaged(s.Labels) {
			// The derived name is taken: slices labelled for it would feed someone else's Service.
			cd.Skipped = append(cd.Skipped, Skip{Kind: KindService, Namespace: k.Namespace, Name: derived,
				Message: "Service exists and is not managed by kubectl-mcs; not importing here"})
			foreign = append(foreign, ci.ID)
			continue
		}
		if imp == nil {
			pending = append(pending, ci.ID)
		}
		buildImport(ci, cd, idx, mem, m, k, exporting, cons)
	}

	// No counts in the messages: a reachability flap must not rewrite every export's status.
	ready := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionReady), Status: metav1.ConditionTrue,
		Reason:  string(mcsv1beta1.ServiceExportReasonExported),
		Message: "ServiceImport present in every reachable importing cluster."}
	if len(pending)+len(foreign) > 0 {
		var parts []string
		if len(pending) > 0 {
			parts = append(parts, "ServiceImport not yet present in "+quoteJoin(pending))
		}
		if len(foreign) > 0 {
			parts = append(parts, "an object not managed by kubectl-mcs blocks the import in "+quoteJoin(foreign))
		}
		ready.Status = metav1.ConditionFalse
		ready.Reason = string(mcsv1beta1.ServiceExportReasonPending)
		ready.Message = strings.Join(parts, "; ") + "."
	}
	conflict := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionConflict), Status: metav1.ConditionFalse,
		Reason: string(mcsv1beta1.ServiceExportReasonNoConflicts), Message: "No conflicts."}
	if len(m.conflicts) > 0 {
		reasons := make([]string, len(m.conflicts))
		msgs := make([]string, len(m.conflicts))
		for i, c := range m.conflicts {
			reasons[i], msgs[i] = c.Reason, c.Message
		}
		conflict.Status = metav1.ConditionTrue
		conflict.Reason = strings.Join(reasons, ",")
		conflict.Message = strings.Join(msgs, " ")
	}
	for _, c := range cons {
		cd := d.Clusters[c.cluster]
		if cd == nil {
			continue // unreachable: nothing is written there
		}
		valid := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), Status: metav1.ConditionTrue,
			Reason: string(mcsv1beta1.ServiceExportReasonValid), Message: "Service is exported."}
		cd.ExportConditions[k] = pruneConditions(findCluster(idx, c.cluster), c.export,
			resolveConditions(c.export, now, []metav1.Condition{valid, ready, conflict}))
	}
}

// holdOnly keeps, in a cluster where no read member exports k, the import, derived Service and
// slices that stand for unread source clusters; the import then names only those.
func holdOnly(ci *clusterIndex, cd *ClusterDesired, mem membership, k key) {
	held := mem.heldSources(ci, k)
	if len(held) == 0 {
		return
	}
	if imp := ci.imports[k]; imp != nil && names.IsManaged(imp.Labels) {
		si := imp.DeepCopy()
		si.Status.Clusters = nil
		for _, c := range held {
			si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
		cd.ServiceImports = append(cd.ServiceImports, si)
	}
	dk := key{Namespace: k.Namespace, Name: names.DerivedServiceName(k.Name)}
	if s := ci.services[dk]; s != nil && names.IsManaged(s.Labels) {
		cd.Held = append(cd.Held, Held{Kind: KindService, Namespace: dk.Namespace, Name: dk.Name, Source: held[0], Outside: mem.outside(held[0])})
	}
	holdSlices(ci, cd, mem, k)
}

// holdSlices keeps ci's copies of k whose source cluster was not read.
func holdSlices(ci *clusterIndex, cd *ClusterDesired, mem membership, k key) {
	for _, s := range ci.copies[k] {
		if src := s.Labels[mcsv1beta1.LabelSourceCluster]; mem.unread(src) {
			cd.Held = append(cd.Held, Held{Kind: KindEndpointSlice, Namespace: s.Namespace, Name: s.Name, Source: src, Outside: mem.outside(src)})
		}
	}
}

// CompareConflicts orders conflicts by namespace, service, reason: the order of every report.
func CompareConflicts(a, b Conflict) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Service, b.Service), strings.Compare(a.Reason, b.Reason))
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// resolveConditions stamps generation and keeps the old transition time when the status holds.
func resolveConditions(exp *mcsv1beta1.ServiceExport, now metav1.Time, want []metav1.Condition) []metav1.Condition {
	for i := range want {
		want[i].ObservedGeneration = exp.Generation
		want[i].LastTransitionTime = now
		for _, old := range exp.Status.Conditions {
			if old.Type == want[i].Type && old.Status == want[i].Status && !old.LastTransitionTime.IsZero() {
				want[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	return want
}

func managedLabels(extra map[string]string) map[string]string {
	l := map[string]string{names.ManagedByLabel: names.ManagedByValue}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func ownerRef(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &t}}
}

// buildImport adds the ServiceImport, derived Service and EndpointSlices of one service to ci.
func buildImport(ci *clusterIndex, cd *ClusterDesired, idx []*clusterIndex, mem membership, m merged, k key, exporting []string, cons []constituent) {
	derived := names.DerivedServiceName(k.Name)
	dk := key{Namespace: k.Namespace, Name: derived}

	// Exported labels and annotations first so ours win on a clash.
	labels := map[string]string{}
	for kk, v := range m.labels {
		labels[kk] = v
	}
	labels[names.ManagedByLabel] = names.ManagedByValue
	annotations := map[string]string{}
	for kk, v := range m.annotations {
		annotations[kk] = v
	}
	annotations[names.DerivedServiceAnnotation] = derived

	si := &mcsv1beta1.ServiceImport{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: mcsv1beta1.ServiceImportKindName},
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, Labels: labels, Annotations: annotations},
		Spec: mcsv1beta1.ServiceImportSpec{
			Ports:                 append([]mcsv1beta1.ServicePort{}, m.ports...),
			Type:                  m.typ,
			SessionAffinity:       m.affinity,
			SessionAffinityConfig: m.affinityConfig.DeepCopy(),
			IPFamilies:            append([]corev1.IPFamily(nil), m.ipFamilies...),
			InternalTrafficPolicy: m.itp,
			TrafficDistribution:   m.td,
		},
	}
	// Unread exporters this cluster recorded stay listed: not read is not "not exporting".
	held := mem.heldSources(ci, k)
	clusters := map[string]bool{}
	for _, c := range append(append([]string{}, exporting...), held...) {
		clusters[c] = true
	}
	for _, c := range sortedKeys(clusters) {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
	}
	observedSvc := ci.services[dk]
	if observedSvc != nil {
		// The families this cluster serves the import in, one IP each (KEP: ips match ipFamilies).
		if fams := sharedFamilies(observedSvc.Spec.IPFamilies, m.ipFamilies); len(fams) > 0 {
			si.Spec.IPFamilies = fams
		}
		if m.typ == mcsv1beta1.ClusterSetIP {
			si.Spec.IPs = clusterIPs(observedSvc)
		}
	}
	cd.ServiceImports = append(cd.ServiceImports, pruneTo(ci.ImportSchema, si))

	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: derived,
			Labels: managedLabels(map[string]string{mcsv1beta1.LabelServiceName: k.Name})},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       m.affinity,
			SessionAffinityConfig: m.affinityConfig.DeepCopy(),
			InternalTrafficPolicy: m.itp,
			TrafficDistribution:   m.td,
		},
	}
	if len(m.ipFamilies) > 0 {
		// The exporters' primary family; a dual-stack export asks for the second family too,
		// which the apiserver adds where the cluster has it.
		policy := corev1.IPFamilyPolicySingleStack
		if len(m.ipFamilies) > 1 {
			policy = corev1.IPFamilyPolicyPreferDualStack
		}
		svc.Spec.IPFamilyPolicy = &policy
		svc.Spec.IPFamilies = []corev1.IPFamily{m.ipFamilies[0]}
	}
	if m.typ == mcsv1beta1.Headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for _, p := range m.ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol,
			AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: intstr.FromInt32(p.Port)})
	}
	// Owner references need the owner's UID, known only once it was observed; a later pass adds them.
	if imp := ci.imports[k]; imp != nil && imp.UID != "" {
		svc.OwnerReferences = ownerRef(mcsv1beta1.GroupVersion.String(), mcsv1beta1.ServiceImportKindName, k.Name, imp.UID)
	}
	cd.Services = append(cd.Services, svc)

	var sliceOwner []metav1.OwnerReference
	if observedSvc != nil && observedSvc.UID != "" {
		sliceOwner = ownerRef("v1", "Service", derived, observedSvc.UID)
	}
	for _, c := range cons {
		src := findCluster(idx, c.cluster)
		served := servedPorts(c, m)
		for _, s := range src.sources[k] {
			name := names.EndpointSliceName(k.Name, c.cluster, s.Name)
			if o := ci.slices[key{Namespace: k.Namespace, Name: name}]; o != nil && !names.IsManaged(o.Labels) {
				cd.Skipped = append(cd.Skipped, Skip{Kind: KindEndpointSlice, Namespace: k.Namespace, Name: name,
					Message: "EndpointSlice exists and is not managed by kubectl-mcs"})
				continue
			}
			if cp := copySlice(s, name, k, c.cluster, derived, sliceOwner, served); cp != nil {
				cd.EndpointSlices = append(cd.EndpointSlices, cp)
			}
		}
	}
	holdSlices(ci, cd, mem, k)
}

// servedPorts are the (name, protocol) of the import ports that constituent c's own Service
// exports exactly as the import does: only for those may its endpoints receive traffic (KEP:
// traffic for a port goes only to constituents that export that port).
func servedPorts(c constituent, m merged) map[string]bool {
	out := map[string]bool{}
	for _, sp := range c.svc.Spec.Ports {
		own := mcsapi.Ports([]corev1.ServicePort{sp})[0]
		for _, p := range m.ports {
			if samePort(p, own) {
				out[portKey(p.Name, p.Protocol)] = true
			}
		}
	}
	return out
}

func portKey(name string, proto corev1.Protocol) string {
	return name + "/" + string(normProtocol(proto))
}

func sharedFamilies(have, want []corev1.IPFamily) []corev1.IPFamily {
	var out []corev1.IPFamily
	for _, f := range have {
		for _, w := range want {
			if f == w {
				out = append(out, f)
			}
		}
	}
	return out
}

// pruneTo keeps only what schema declares of obj; obj itself when schema is nil.
func pruneTo[T any, PT interface {
	*T
	runtime.Object
}](schema Pruner, obj PT) PT {
	if schema == nil {
		return obj
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj
	}
	if len(schema.Prune(u)) == 0 {
		return obj
	}
	out := PT(new(T))
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u, out) != nil {
		return obj
	}
	return out
}

// pruneConditions keeps of the conditions what ci's served ServiceExport schema declares.
func pruneConditions(ci *clusterIndex, exp *mcsv1beta1.ServiceExport, conds []metav1.Condition) []metav1.Condition {
	if ci == nil || ci.ExportSchema == nil {
		return conds
	}
	e := &mcsv1beta1.ServiceExport{TypeMeta: exp.TypeMeta, Status: mcsv1beta1.ServiceExportStatus{Conditions: conds}}
	return pruneTo(ci.ExportSchema, e).Status.Conditions
}

func findCluster(idx []*clusterIndex, id string) *clusterIndex {
	i := sort.Search(len(idx), func(i int) bool { return idx[i].ID >= id })
	return idx[i]
}

func clusterIPs(s *corev1.Service) []string {
	ips := s.Spec.ClusterIPs
	if len(ips) == 0 && s.Spec.ClusterIP != "" {
		ips = []string{s.Spec.ClusterIP}
	}
	var out []string
	for _, ip := range ips {
		if ip != "" && ip != corev1.ClusterIPNone {
			out = append(out, ip)
		}
	}
	return out
}

// copySlice copies the endpoints of a source slice. nodeName, targetRef and hints are dropped:
// they name nodes and pods of the source cluster, which mean nothing (or something else) here.
// Only the ports in served are kept; a slice left with none is not copied (nil).
func copySlice(s *discoveryv1.EndpointSlice, name string, k key, cluster, derived string, owner []metav1.OwnerReference, served map[string]bool) *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name, OwnerReferences: owner,
			Labels: map[string]string{
				mcsv1beta1.LabelServiceName:       k.Name,
				mcsv1beta1.LabelSourceCluster:     cluster,
				discoveryv1.LabelServiceName:      derived,
				names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue,
				names.ManagedByLabel:              names.ManagedByValue,
			}},
		AddressType: s.AddressType,
	}
	for _, e := range s.Endpoints {
		c := discoveryv1.Endpoint{
			Addresses:  append([]string(nil), e.Addresses...),
			Conditions: *e.Conditions.DeepCopy(),
		}
		if e.Hostname != nil {
			h := *e.Hostname
			c.Hostname = &h
		}
		if e.Zone != nil {
			z := *e.Zone
			c.Zone = &z
		}
		out.Endpoints = append(out.Endpoints, c)
	}
	for _, p := range s.Ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if served[portKey(strPtrVal(p.Name), proto)] {
			out.Ports = append(out.Ports, *p.DeepCopy())
		}
	}
	if len(s.Ports) > 0 && len(out.Ports) == 0 {
		return nil
	}
	return out
}

func sortDesired(cd *ClusterDesired) {
	sort.Slice(cd.ServiceImports, func(i, j int) bool {
		return objLess(cd.ServiceImports[i].ObjectMeta, cd.ServiceImports[j].ObjectMeta)
	})
	sort.Slice(cd.Services, func(i, j int) bool { return objLess(cd.Services[i].ObjectMeta, cd.Services[j].ObjectMeta) })
	sort.Slice(cd.EndpointSlices, func(i, j int) bool {
		return objLess(cd.EndpointSlices[i].ObjectMeta, cd.EndpointSlices[j].ObjectMeta)
	})
	slices.SortFunc(cd.Held, func(a, b Held) int {
		return byNamespaceNameKind(a.Namespace, a.Name, a.Kind, b.Namespace, b.Name, b.Kind)
	})
	slices.SortStableFunc(cd.Skipped, func(a, b Skip) int {
		return byNamespaceNameKind(a.Namespace, a.Name, a.Kind, b.Namespace, b.Name, b.Kind)
	})
}

func byNamespaceNameKind(ans, aname, akind, bns, bname, bkind string) int {
	return cmp.Or(strings.Compare(ans, bns), strings.Compare(aname, bname), strings.Compare(akind, bkind))
}

func objLess(a, b metav1.ObjectMeta) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// Pruning returns s when it drops something the engine writes, nil when it holds it all: a member
// serving the full mcs-api then costs no conversion on the sync path. Decided once, when the
// member joins, against objects with every field the engine sets.
func Pruning(s Pruner, kind string) Pruner {
	if s == nil {
		return nil
	}
	one, fams := int32(1), []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	itp, td, app := corev1.ServiceInternalTrafficPolicyLocal, "PreferClose", "http"
	var full runtime.Object = &mcsv1beta1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"}},
		Spec: mcsv1beta1.ServiceImportSpec{
			Ports: []mcsv1beta1.ServicePort{{Name: "p", Protocol: corev1.ProtocolTCP, AppProtocol: &app, Port: 80}},
			IPs:   []string{"10.0.0.1", "fd00::1"}, Type: mcsv1beta1.ClusterSetIP,
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &one}},
			IPFamilies:            fams, InternalTrafficPolicy: &itp, TrafficDistribution: &td,
		},
		Status: mcsv1beta1.ServiceImportStatus{Clusters: []mcsv1beta1.ClusterStatus{{Cluster: "a"}, {Cluster: "b"}}},
	}
	if kind == KindServiceExportStatus {
		full = &mcsv1beta1.ServiceExport{Status: mcsv1beta1.ServiceExportStatus{Conditions: []metav1.Condition{{
			Type: "Valid", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: metav1.Now(),
			Reason: "Valid", Message: "m"}}}}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(full)
	if kind == KindServiceExportStatus {
		delete(u, "spec") // only an export's status is ever written
	}
	if err != nil || len(s.Prune(u)) > 0 {
		return s
	}
	return nil
}
