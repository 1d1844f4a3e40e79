package engine

// Equality: whether what a cluster holds already says what the plan wants, so that nothing is
// written twice.

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// metaMatches reports whether observed carries every label, annotation and owner reference of
// desired (of the annotations, those the caches of an object of kind hold), and no label or
// annotation that managedFields say we set earlier but no longer want. Anything else on observed
// belongs to somebody else and is no reason to write.
func metaMatches(kind string, o, d metav1.ObjectMeta, fm string) bool {
	if !subset(d.Labels, o.Labels) || !keptSubset(kind, d.Annotations, o.Annotations) {
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

// importSpecEqual compares the import's spec on the fields desired sets; a field it leaves unset
// (no IPs yet, no traffic distribution) counts only where we set it earlier (own).
func importSpecEqual(o, d mcsv1beta1.ServiceImportSpec, own owned) bool {
	if o.Type != d.Type || normAffinity(o.SessionAffinity) != normAffinity(d.SessionAffinity) ||
		!optionalEqual(own, normITP(o.InternalTrafficPolicy), normITP(d.InternalTrafficPolicy), d.InternalTrafficPolicy == nil, "f:internalTrafficPolicy") ||
		!optionalEqual(own, strPtrVal(o.TrafficDistribution), strPtrVal(d.TrafficDistribution), d.TrafficDistribution == nil, "f:trafficDistribution") ||
		!optionalEqual(own, strings.Join(o.IPs, ","), strings.Join(d.IPs, ","), len(d.IPs) == 0, "f:ips") ||
		!optionalEqual(own, familiesString(o.IPFamilies), familiesString(d.IPFamilies), len(d.IPFamilies) == 0, "f:ipFamilies") ||
		(len(d.Ports) > 0 || own.has("f:spec", "f:ports")) && len(o.Ports) != len(d.Ports) {
		return false
	}
	if normAffinity(d.SessionAffinity) == corev1.ServiceAffinityClientIP &&
		affinityTimeout(o.SessionAffinityConfig) != affinityTimeout(d.SessionAffinityConfig) {
		return false
	}
	for i := range d.Ports {
		if !samePort(o.Ports[i], d.Ports[i]) {
			return false
		}
	}
	return true
}

// optionalEqual compares one scalar field (normalised): when desired leaves it unset (unset), a
// difference counts only if we set the field (spec.<field>) earlier.
func optionalEqual(own owned, o, d string, unset bool, field string) bool {
	if !unset {
		return o == d
	}
	return !own.stale(o != d, "f:spec", field)
}

func familiesString(fs []corev1.IPFamily) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ",")
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

// serviceSpecEqual compares the derived Service's spec on the fields desired sets. What another
// field manager added (a selector, a port, a traffic policy) is theirs: our apply never removes it,
// so it is no reason to write; a field we set earlier and no longer want is (own).
func serviceSpecEqual(o, d corev1.ServiceSpec, own owned) bool {
	ot := o.Type
	if ot == "" {
		ot = corev1.ServiceTypeClusterIP
	}
	if ot != d.Type || own.stale(len(o.Selector) > 0, "f:spec", "f:selector") ||
		normAffinity(o.SessionAffinity) != normAffinity(d.SessionAffinity) ||
		!optionalEqual(own, normITP(o.InternalTrafficPolicy), normITP(d.InternalTrafficPolicy), d.InternalTrafficPolicy == nil, "f:internalTrafficPolicy") ||
		!optionalEqual(own, strPtrVal(o.TrafficDistribution), strPtrVal(d.TrafficDistribution), d.TrafficDistribution == nil, "f:trafficDistribution") {
		return false
	}
	if normAffinity(d.SessionAffinity) == corev1.ServiceAffinityClientIP &&
		affinityTimeout(o.SessionAffinityConfig) != affinityTimeout(d.SessionAffinityConfig) {
		return false
	}
	// The policy we ask for; the apiserver fills in the rest.
	if d.IPFamilyPolicy != nil && (o.IPFamilyPolicy == nil || *o.IPFamilyPolicy != *d.IPFamilyPolicy) {
		return false
	}
	// Ports go by their list-map key, port and protocol: each desired one present and the same,
	// and no other that we set.
	want := map[string]corev1.ServicePort{}
	for _, dp := range d.Ports {
		want[portFieldKey(dp.Port, string(normProtocol(dp.Protocol)))] = dp
	}
	found := 0
	for _, op := range o.Ports {
		k := portFieldKey(op.Port, string(normProtocol(op.Protocol)))
		dp, ok := want[k]
		if !ok {
			if own.has("f:spec", "f:ports", k) {
				return false
			}
			continue
		}
		found++
		if op.Name != dp.Name || strPtrVal(op.AppProtocol) != strPtrVal(dp.AppProtocol) || op.TargetPort != dp.TargetPort {
			return false
		}
	}
	return found == len(want)
}

// mergeConditions puts want in place of the owned condition types of have, keeping foreign ones.
