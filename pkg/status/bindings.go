package status

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// ConditionScheduled is the ResourceBinding condition Karmada's scheduler sets.
const ConditionScheduled = "Scheduled"

// bindingKey is what a ResourceBinding binds: group, kind, namespace and name (Karmada serves an
// object in every version of its CRD, so the version is left out).
type bindingKey struct{ group, kind, namespace, name string }

func keyOf(apiVersion, kind, namespace, name string) bindingKey {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return bindingKey{gv.Group, kind, namespace, name}
}

// bindings indexes the ResourceBindings whose Scheduled condition is False: Karmada's scheduler
// found no member to place the object in (a member that does not serve its API, one the
// placement does not name), and says why.
type bindings map[bindingKey]KarmadaBindingStatus

func unscheduledBindings(rbs []*unstructured.Unstructured) bindings {
	out := bindings{}
	for _, rb := range rbs {
		res, _, _ := unstructured.NestedMap(rb.Object, "spec", "resource")
		str := func(k string) string { v, _ := res[k].(string); return v }
		for _, c := range conditionsOf(rb) {
			if c.Type != ConditionScheduled || c.Status != metav1.ConditionFalse {
				continue
			}
			ns := str("namespace")
			if ns == "" {
				ns = rb.GetNamespace()
			}
			out[keyOf(str("apiVersion"), str("kind"), ns, str("name"))] = KarmadaBindingStatus{
				Namespace: rb.GetNamespace(), Name: rb.GetName(), Resource: str("kind") + "/" + str("name"),
				APIVersion: str("apiVersion"), Scheduled: c.Status, Reason: c.Reason, Message: c.Message,
				CreationTimestamp: rb.GetCreationTimestamp()}
		}
	}
	return out
}

// problem says why the object of k never reaches a member, "" when its binding is not
// unscheduled. what names the object ("its Service").
func (b bindings) problem(k bindingKey, what string) string {
	s, ok := b[k]
	if !ok {
		return ""
	}
	return fmt.Sprintf("Karmada has not scheduled %s: ResourceBinding %s is %s=%s (%s): %s", what, s.Name, ConditionScheduled, s.Scheduled, s.Reason, s.Message)
}

// ours lists the unscheduled bindings of what kubectl-mcs propagated: the objects its
// PropagationPolicies select and the Services of its MultiClusterServices. Sorted.
func (b bindings) ours(policies, mcss []*unstructured.Unstructured) []KarmadaBindingStatus {
	out := []KarmadaBindingStatus{}
	for k, s := range b {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(s.APIVersion)
		obj.SetKind(k.kind)
		obj.SetNamespace(k.namespace)
		obj.SetName(k.name)
		if svc, ok := selectedByOurs(policies, obj); ok {
			s.Service = svc
			out = append(out, s)
		} else if k.group == "" && k.kind == "Service" && ownMCS(mcss, k.namespace, k.name) {
			s.Service = k.name
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i].Namespace, out[i].Name, out[j].Namespace, out[j].Name) })
	return out
}

// selectedByOurs says whether one of our policies selects obj, and the Service it was written
// for: the one its policy selects beside a workload, else obj's own name.
func selectedByOurs(policies []*unstructured.Unstructured, obj *unstructured.Unstructured) (string, bool) {
	for _, p := range policies {
		if !names.IsManaged(p.GetLabels()) || !selects(p, obj) {
			continue
		}
		sels, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
		for _, x := range sels {
			if m, _ := x.(map[string]any); m["apiVersion"] == "v1" && m["kind"] == "Service" {
				if n, _ := m["name"].(string); n != "" {
					return n, true
				}
			}
		}
		return obj.GetName(), true
	}
	return "", false
}

func ownMCS(mcss []*unstructured.Unstructured, ns, name string) bool {
	for _, m := range mcss {
		if m.GetNamespace() == ns && m.GetName() == name && names.IsManaged(m.GetLabels()) {
			return true
		}
	}
	return false
}
