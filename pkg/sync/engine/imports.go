package engine

// What an importing cluster gets: the ServiceImport, the derived Service and the copied slices.

import (
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// exported is one service as the read clusters export it: what every importing cluster's objects
// are built from.
type exported struct {
	merged
	key       key
	derived   string
	cons      []constituent // oldest first
	exporting []string      // the constituents' clusters, sorted
	idx       []*clusterIndex
	mem       membership
	zoneHints *ZoneHints // nil: the service asks for none
}

func newExported(idx []*clusterIndex, mem membership, k key, cons []constituent) *exported {
	e := &exported{merged: mergeConstituents(k.Namespace, k.Name, cons), key: k, derived: names.DerivedServiceName(k.Name),
		cons: cons, idx: idx, mem: mem}
	for _, c := range cons {
		e.exporting = append(e.exporting, c.cluster)
	}
	sort.Strings(e.exporting)
	e.zoneHints = zoneHintsOf(idx, k, e.td, cons, e.union)
	return e
}

// buildImport adds the ServiceImport, derived Service and EndpointSlices of one service to ci.
func buildImport(ci *clusterIndex, cd *ClusterDesired, e *exported) {
	observedSvc := ci.ix.Services[key{Namespace: e.key.Namespace, Name: e.derived}]
	si := e.serviceImport(ci, observedSvc)
	cd.Services = append(cd.Services, e.derivedService(ci))
	var sliceOwner []metav1.OwnerReference
	if observedSvc != nil && observedSvc.UID != "" {
		sliceOwner = ownerRef("v1", "Service", e.derived, observedSvc.UID)
	}
	first := len(cd.EndpointSlices)
	e.copySlices(ci, cd, sliceOwner)
	si.Status.Conditions = []metav1.Condition{e.importReady(ci, observedSvc, cd.EndpointSlices[first:])}
	cd.ServiceImports = append(cd.ServiceImports, pruneTo(ci.ImportSchema, si))
	holdSlices(ci, cd, e.mem, e.key)
}

// serviceImport is the ServiceImport in ci; observedSvc, the derived Service ci holds (nil: none
// yet), gives its IPs and families.
func (e *exported) serviceImport(ci *clusterIndex, observedSvc *corev1.Service) *mcsv1beta1.ServiceImport {
	// Exported labels and annotations first so ours win on a clash.
	labels := maps.Clone(e.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[names.ManagedByLabel] = names.ManagedByValue
	// An annotation the caches drop is not written: it would never be seen to be there (the
	// exports that name it say so in Valid).
	annotations, _ := keptAnnotations(e.annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[names.DerivedServiceAnnotation] = e.derived
	// Unread exporters this cluster recorded stay listed: not read is not "not exporting".
	clusters := map[string]bool{}
	for _, c := range append(slices.Clone(e.exporting), e.mem.heldSources(ci, e.key)...) {
		clusters[c] = true
	}
	ids := sortedKeys(clusters)
	// The identities of every cluster ci still holds records of, not only of those named now: a
	// former ID's must outlast its place in status.clusters and its copies, which later rounds
	// take away.
	recorded := recordedSources(ci, e.key)
	for _, c := range ids {
		recorded[c] = true
	}
	if uids := e.mem.sourceUIDs(ci, e.key, sortedKeys(recorded)); uids != "" {
		annotations[names.SourceClusterUIDsAnnotation] = uids
	}

	si := &mcsv1beta1.ServiceImport{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: mcsv1beta1.ServiceImportKindName},
		ObjectMeta: metav1.ObjectMeta{Namespace: e.key.Namespace, Name: e.key.Name, Labels: labels, Annotations: annotations},
		Spec: mcsv1beta1.ServiceImportSpec{
			Ports:                 append([]mcsv1beta1.ServicePort{}, e.ports...),
			Type:                  e.typ,
			SessionAffinity:       e.affinity,
			SessionAffinityConfig: e.affinityConfig.DeepCopy(),
			IPFamilies:            append([]corev1.IPFamily(nil), e.ipFamilies...),
			InternalTrafficPolicy: e.itp,
			TrafficDistribution:   e.td,
		},
	}
	for _, c := range ids {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
	}
	if observedSvc != nil {
		// The families this cluster serves the import in, one IP each (KEP: ips match ipFamilies).
		if fams := sharedFamilies(observedSvc.Spec.IPFamilies, e.ipFamilies); len(fams) > 0 {
			si.Spec.IPFamilies = fams
		}
		if e.typ == mcsv1beta1.ClusterSetIP {
			si.Spec.IPs = clusterIPs(observedSvc)
		}
	}
	return si
}

// derivedService is the Service in ci that the copied slices feed.
func (e *exported) derivedService(ci *clusterIndex) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: e.key.Namespace, Name: e.derived,
			Labels: managedLabels(map[string]string{mcsv1beta1.LabelServiceName: e.key.Name})},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       e.affinity,
			SessionAffinityConfig: e.affinityConfig.DeepCopy(),
			InternalTrafficPolicy: e.itp,
			TrafficDistribution:   e.td,
		},
	}
	switch {
	case len(e.ipFamilies) > 1:
		// A dual-stack export asks for both families and names none: the apiserver gives the
		// cluster's own families, both where it is dual-stack, and a single-stack cluster of
		// either family accepts it (one that is not configured for a family named in ipFamilies
		// refuses the Service, PreferDualStack or not).
		policy := corev1.IPFamilyPolicyPreferDualStack
		svc.Spec.IPFamilyPolicy = &policy
	case len(e.ipFamilies) == 1:
		// A single-stack export: its family, which a cluster without it refuses (its endpoints
		// could not be reached from there).
		policy := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &policy
		svc.Spec.IPFamilies = []corev1.IPFamily{e.ipFamilies[0]}
	}
	if e.typ == mcsv1beta1.Headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for _, p := range e.ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol,
			AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: intstr.FromInt32(p.Port)})
	}
	// Owner references need the owner's UID, known only once it was observed; a later pass adds them.
	if imp := ci.ix.Imports[e.key]; imp != nil && imp.UID != "" {
		svc.OwnerReferences = ownerRef(mcsv1beta1.GroupVersion.String(), mcsv1beta1.ServiceImportKindName, e.key.Name, imp.UID)
	}
	return svc
}

// copySlices adds to cd a copy of every constituent's source slices, except where a slice we did
// not create holds the copy's name.
func (e *exported) copySlices(ci *clusterIndex, cd *ClusterDesired, owner []metav1.OwnerReference) {
	k := e.key
	for _, c := range e.cons {
		src := findCluster(e.idx, c.cluster)
		served := servedPorts(c, e.union)
		for _, s := range src.ix.Sources[k] {
			name := names.EndpointSliceName(k.Name, c.cluster, s.Name)
			if o := ci.ix.Slices[key{Namespace: k.Namespace, Name: name}]; o != nil && !names.IsManaged(o.Labels) {
				cd.Skipped = append(cd.Skipped, Skip{Kind: snapshot.KindEndpointSlice, Namespace: k.Namespace, Name: name,
					Message: "EndpointSlice exists and is not managed by kubectl-mcs"})
				continue
			}
			if cp := copySlice(s, name, k, c.cluster, e.derived, owner, served); cp != nil {
				if e.zoneHints != nil && e.zoneHints.Effective {
					hintOwnZones(cp)
				}
				cd.EndpointSlices = append(cd.EndpointSlices, cp)
			}
		}
	}
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
// they name nodes and pods of the source cluster, which mean nothing (or something else) here
// (zonehints.go and hints.go give copies their own). Only the ports in served are kept (copyPorts);
// a slice left with none is not copied (nil).
func copySlice(s *discoveryv1.EndpointSlice, name string, k key, cluster, derived string, owner []metav1.OwnerReference, served map[string]string) *discoveryv1.EndpointSlice {
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
	var copied bool
	if out.Ports, copied = copyPorts(s, served); !copied {
		return nil
	}
	return out
}

// copyPorts are the ports of source slice s that its copy carries: those in served, named as the
// union names them (kube-proxy matches them to the derived Service's by name), each name once.
// copied is false when s has ports and none is served: the slice is not copied.
func copyPorts(s *discoveryv1.EndpointSlice, served map[string]string) (ports []discoveryv1.EndpointPort, copied bool) {
	named := map[string]bool{}
	for _, p := range s.Ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		as, ok := served[portKey(strPtrVal(p.Name), proto)]
		if !ok || named[as] {
			continue
		}
		named[as] = true
		cp := *p.DeepCopy()
		if strPtrVal(cp.Name) != as {
			cp.Name = &as
		}
		ports = append(ports, cp)
	}
	return ports, len(s.Ports) == 0 || len(ports) > 0
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
