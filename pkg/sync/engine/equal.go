package engine

// Equality: whether what a cluster holds already says what the plan wants, so that nothing is
// written twice.

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// metaMatches reports whether observed carries every label, annotation and owner reference of
// desired, and no label or annotation that managedFields say we set earlier but no longer want.
// Anything else on observed belongs to somebody else and is no reason to write.
func metaMatches(o, d metav1.ObjectMeta, fm string) bool {
	if !subset(d.Labels, o.Labels) || !subset(d.Annotations, o.Annotations) {
		return false
	}
	for _, dr := range d.OwnerReferences {
		found := false
		for _, or := range o.OwnerReferences {
			if or.UID == dr.UID && or.Kind == dr.Kind && or.Name == dr.Name {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, f := range []struct {
		field    string
		observed map[string]string
		desired  map[string]string
	}{{"labels", o.Labels, d.Labels}, {"annotations", o.Annotations, d.Annotations}} {
		if len(f.observed) == len(f.desired) {
			continue // a superset of desired (above) of the same size: nothing extra to own
		}
		for k := range OwnedMetaKeys(o.ManagedFields, fm, f.field) {
			if _, on := f.observed[k]; on {
				if _, want := f.desired[k]; !want {
					return false
				}
			}
		}
	}
	return true
}

func subset(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// OwnedMetaKeys lists the metadata.<field> keys that manager fm owns according to managedFields.
func OwnedMetaKeys(mf []metav1.ManagedFieldsEntry, fm, field string) map[string]bool {
	out := map[string]bool{}
	for _, e := range mf {
		if e.Manager != fm || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
			continue // another shape than metadata maps; nothing we can use
		}
		for k := range fields["f:metadata"]["f:"+field] {
			if name, ok := strings.CutPrefix(k, "f:"); ok {
				out[name] = true
			}
		}
	}
	return out
}

func importSpecEqual(o, d mcsv1beta1.ServiceImportSpec) bool {
	if o.Type != d.Type || normAffinity(o.SessionAffinity) != normAffinity(d.SessionAffinity) ||
		normITP(o.InternalTrafficPolicy) != normITP(d.InternalTrafficPolicy) ||
		strPtrVal(o.TrafficDistribution) != strPtrVal(d.TrafficDistribution) ||
		!stringsEqual(o.IPs, d.IPs) || len(o.IPFamilies) != len(d.IPFamilies) || len(o.Ports) != len(d.Ports) {
		return false
	}
	if normAffinity(d.SessionAffinity) == corev1.ServiceAffinityClientIP &&
		affinityTimeout(o.SessionAffinityConfig) != affinityTimeout(d.SessionAffinityConfig) {
		return false
	}
	for i := range o.IPFamilies {
		if o.IPFamilies[i] != d.IPFamilies[i] {
			return false
		}
	}
	for i := range o.Ports {
		if !samePort(o.Ports[i], d.Ports[i]) {
			return false
		}
	}
	return true
}

func stringsEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func clustersEqual(a, b []mcsv1beta1.ClusterStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Cluster != b[i].Cluster {
			return false
		}
	}
	return true
}

func serviceSpecEqual(o, d corev1.ServiceSpec) bool {
	ot := o.Type
	if ot == "" {
		ot = corev1.ServiceTypeClusterIP
	}
	if ot != d.Type || len(o.Selector) != 0 ||
		normAffinity(o.SessionAffinity) != normAffinity(d.SessionAffinity) ||
		normITP(o.InternalTrafficPolicy) != normITP(d.InternalTrafficPolicy) ||
		strPtrVal(o.TrafficDistribution) != strPtrVal(d.TrafficDistribution) || len(o.Ports) != len(d.Ports) {
		return false
	}
	if normAffinity(d.SessionAffinity) == corev1.ServiceAffinityClientIP &&
		affinityTimeout(o.SessionAffinityConfig) != affinityTimeout(d.SessionAffinityConfig) {
		return false
	}
	// The policy and primary family we ask for; the apiserver fills in the rest.
	if d.IPFamilyPolicy != nil && (o.IPFamilyPolicy == nil || *o.IPFamilyPolicy != *d.IPFamilyPolicy) {
		return false
	}
	for i := range o.Ports {
		op, dp := o.Ports[i], d.Ports[i]
		if op.Name != dp.Name || normProtocol(op.Protocol) != normProtocol(dp.Protocol) || op.Port != dp.Port ||
			strPtrVal(op.AppProtocol) != strPtrVal(dp.AppProtocol) || op.TargetPort != dp.TargetPort {
			return false
		}
	}
	return true
}

func boolPtrEqual(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func endpointsEqual(o, d []discoveryv1.Endpoint) bool {
	if len(o) != len(d) {
		return false
	}
	for i := range o {
		a, b := o[i], d[i]
		if !stringsEqual(a.Addresses, b.Addresses) || strPtrVal(a.Hostname) != strPtrVal(b.Hostname) ||
			strPtrVal(a.Zone) != strPtrVal(b.Zone) ||
			!boolPtrEqual(a.Conditions.Ready, b.Conditions.Ready) ||
			!boolPtrEqual(a.Conditions.Serving, b.Conditions.Serving) ||
			!boolPtrEqual(a.Conditions.Terminating, b.Conditions.Terminating) {
			return false
		}
	}
	return true
}

func slicePortsEqual(o, d []discoveryv1.EndpointPort) bool {
	if len(o) != len(d) {
		return false
	}
	for i := range o {
		a, b := o[i], d[i]
		ap, bp := corev1.ProtocolTCP, corev1.ProtocolTCP
		if a.Protocol != nil {
			ap = normProtocol(*a.Protocol)
		}
		if b.Protocol != nil {
			bp = normProtocol(*b.Protocol)
		}
		if strPtrVal(a.Name) != strPtrVal(b.Name) || ap != bp || strPtrVal(a.AppProtocol) != strPtrVal(b.AppProtocol) ||
			(a.Port == nil) != (b.Port == nil) || (a.Port != nil && *a.Port != *b.Port) {
			return false
		}
	}
	return true
}

// mergeConditions puts want in place of the owned condition types of have, keeping foreign ones.
