package engine

// What an importing cluster gets: the ServiceImport, the derived Service and the copied slices.

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

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
	observedSvc := ci.ix.Services[dk]
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
	if imp := ci.ix.Imports[k]; imp != nil && imp.UID != "" {
		svc.OwnerReferences = ownerRef(mcsv1beta1.GroupVersion.String(), mcsv1beta1.ServiceImportKindName, k.Name, imp.UID)
	}
	cd.Services = append(cd.Services, svc)

	var sliceOwner []metav1.OwnerReference
	if observedSvc != nil && observedSvc.UID != "" {
		sliceOwner = ownerRef("v1", "Service", derived, observedSvc.UID)
	}
	for _, c := range cons {
		src := findCluster(idx, c.cluster)
		served := servedPorts(c, m.union)
		for _, s := range src.ix.Sources[k] {
			name := names.EndpointSliceName(k.Name, c.cluster, s.Name)
			if o := ci.ix.Slices[key{Namespace: k.Namespace, Name: name}]; o != nil && !names.IsManaged(o.Labels) {
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
// they name nodes and pods of the source cluster, which mean nothing (or something else) here.
// Only the ports in served are kept, named as the union names them (kube-proxy matches them to
// the derived Service's by name), each name once; a slice left with none is not copied (nil).
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
		out.Ports = append(out.Ports, cp)
	}
	if len(s.Ports) > 0 && len(out.Ports) == 0 {
		return nil
	}
	return out
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
