package status

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Karmada MultiClusterService condition types (networking.karmada.io/v1alpha1).
const (
	ConditionServiceApplied          = "ServiceApplied"
	ConditionEndpointSliceDispatched = "EndpointSliceDispatched"
)

// BuildKarmada joins the control plane's objects into the Karmada status list.
func BuildKarmada(in snapshot.Karmada) *KarmadaServiceStatusList {
	out := &KarmadaServiceStatusList{ControlPlane: in.ControlPlane, MultiClusterServices: []KarmadaMCSStatus{},
		ServiceExports: []KarmadaObjectStatus{}, ServiceImports: []KarmadaObjectStatus{}}
	out.APIVersion, out.Kind = APIVersion, KindKarmada
	services := map[key]bool{}
	for _, k := range in.Services {
		services[k] = true
	}
	unscheduled := unscheduledBindings(in.ResourceBindings)
	for _, u := range in.MultiClusterServices {
		m := karmadaMCS(u, services)
		// Karmada's controllers bind the Service of a MultiClusterService to its clusters.
		withBinding(&m.Health, &m.Problems, unscheduled.problem(keyOf("v1", "Service", m.Namespace, m.Name), "its Service"))
		out.MultiClusterServices = append(out.MultiClusterServices, m)
	}
	exports := map[key]bool{}
	for _, u := range in.ServiceExports {
		exports[key{Namespace: u.GetNamespace(), Name: u.GetName()}] = true
		out.ServiceExports = append(out.ServiceExports, karmadaObject(u, in.Policies, nil, unscheduled))
	}
	for _, u := range in.ServiceImports {
		out.ServiceImports = append(out.ServiceImports, karmadaObject(u, in.Policies, exports, unscheduled))
	}
	out.ResourceBindings = unscheduled.ours(in.Policies, in.MultiClusterServices)
	sort.Slice(out.MultiClusterServices, func(i, j int) bool {
		return less(out.MultiClusterServices[i].Namespace, out.MultiClusterServices[i].Name, out.MultiClusterServices[j].Namespace, out.MultiClusterServices[j].Name)
	})
	for _, l := range [][]KarmadaObjectStatus{out.ServiceExports, out.ServiceImports} {
		sort.Slice(l, func(i, j int) bool { return less(l[i].Namespace, l[i].Name, l[j].Namespace, l[j].Name) })
	}
	return out
}

// withBinding adds an unscheduled binding's problem (none when "") to an object's.
func withBinding(h *Health, problems *[]string, problem string) {
	if problem == "" {
		return
	}
	*problems = append(*problems, problem)
	*h = Degraded
}

func less(ns1, n1, ns2, n2 string) bool {
	if ns1 != ns2 {
		return ns1 < ns2
	}
	return n1 < n2
}

func karmadaMCS(u *unstructured.Unstructured, services map[key]bool) KarmadaMCSStatus {
	s := KarmadaMCSStatus{Namespace: u.GetNamespace(), Name: u.GetName(), Types: []string{}, Ports: []Port{},
		ProviderClusters: []string{}, ConsumerClusters: []string{}, Conditions: []metav1.Condition{},
		Managed: names.IsManaged(u.GetLabels()), CreationTimestamp: u.GetCreationTimestamp()}
	s.Types, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "types")
	if s.Types == nil {
		s.Types = []string{}
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	for _, p := range ports {
		m, _ := p.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		num, _, _ := unstructured.NestedInt64(m, "port")
		s.Ports = append(s.Ports, Port{Name: name, Port: int32(num)})
	}
	s.ProviderClusters = clusterNames(u, "providerClusters", "serviceProvisionClusters")
	s.ConsumerClusters = clusterNames(u, "consumerClusters", "serviceConsumptionClusters")
	if len(s.ConsumerClusters) == 0 {
		if r, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "range", "clusterNames"); len(r) > 0 {
			s.ConsumerClusters = r
		}
	}
	s.Conditions = conditionsOf(u)
	s.ServiceExists = services[key{Namespace: s.Namespace, Name: s.Name}]

	var problems []string
	if !s.ServiceExists {
		problems = append(problems, fmt.Sprintf("No Service %s/%s on the control plane: a MultiClusterService exposes the Service of its name.", s.Namespace, s.Name))
	}
	reported := false
	for _, c := range s.Conditions {
		if c.Type != ConditionServiceApplied && c.Type != ConditionEndpointSliceDispatched {
			continue
		}
		reported = true
		if c.Status != metav1.ConditionTrue {
			problems = append(problems, fmt.Sprintf("%s is %s (%s): %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	s.Problems = problems
	switch {
	case len(problems) > 0:
		s.Health = Degraded
	case !reported:
		s.Health = Unknown
		s.Problems = []string{"No Karmada controller has reported on it yet (no ServiceApplied or EndpointSliceDispatched condition)."}
	default:
		s.Health = Healthy
	}
	return s
}

// clusterNames reads spec.FIELD[].name, falling back to the deprecated spec.DEPRECATED[].
func clusterNames(u *unstructured.Unstructured, field, deprecated string) []string {
	out := []string{}
	l, _, _ := unstructured.NestedSlice(u.Object, "spec", field)
	for _, c := range l {
		if m, ok := c.(map[string]any); ok {
			if n, _ := m["name"].(string); n != "" {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		if d, _, _ := unstructured.NestedStringSlice(u.Object, "spec", deprecated); len(d) > 0 {
			out = d
		}
	}
	return out
}

func conditionsOf(u *unstructured.Unstructured) []metav1.Condition {
	out := []metav1.Condition{}
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

func karmadaObject(u *unstructured.Unstructured, policies []*unstructured.Unstructured, exports map[key]bool, unscheduled bindings) KarmadaObjectStatus {
	s := KarmadaObjectStatus{Namespace: u.GetNamespace(), Name: u.GetName(), APIVersion: u.GetAPIVersion(),
		PlacedIn: []string{}, Policies: []string{}, Managed: names.IsManaged(u.GetLabels()),
		CreationTimestamp: u.GetCreationTimestamp()}
	if exports != nil { // a ServiceImport
		s.Type, _, _ = unstructured.NestedString(u.Object, "spec", "type")
		s.Ports = []Port{}
		if si, err := decode.Unstructured[mcsv1beta1.ServiceImport](u); err == nil {
			for _, p := range si.Spec.Ports {
				s.Ports = append(s.Ports, toPort(p))
			}
		}
	}
	if c := conditionsOf(u); len(c) > 0 {
		s.Conditions = c
	}
	placed := map[string]bool{}
	for _, p := range policies {
		if !selects(p, u) {
			continue
		}
		name := p.GetName()
		if p.GetNamespace() == "" {
			name = "clusterpropagationpolicy/" + name
		}
		s.Policies = append(s.Policies, name)
		cl, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "placement", "clusterAffinity", "clusterNames")
		for _, c := range cl {
			placed[c] = true
		}
	}
	for c := range placed {
		s.PlacedIn = append(s.PlacedIn, c)
	}
	sort.Strings(s.PlacedIn)
	sort.Strings(s.Policies)

	var problems []string
	if len(s.Policies) == 0 {
		problems = append(problems, "No PropagationPolicy selects it: it stays on the control plane.")
	} else if len(s.PlacedIn) == 0 {
		problems = append(problems, fmt.Sprintf("Its PropagationPolicies (%s) name no cluster.", joinOr(s.Policies, "")))
	}
	if exports != nil && !exports[key{Namespace: s.Namespace, Name: s.Name}] {
		problems = append(problems, "No ServiceExport of the same name on the control plane: nothing is exported to import.")
	}
	for _, c := range s.Conditions {
		if c.Type == "Valid" && c.Status == metav1.ConditionFalse {
			problems = append(problems, fmt.Sprintf("%s is %s (%s): %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if p := unscheduled.problem(keyOf(s.APIVersion, u.GetKind(), s.Namespace, s.Name), "it"); p != "" {
		problems = append(problems, p)
	}
	s.Problems = problems
	s.Health = Healthy
	if len(problems) > 0 {
		s.Health = Degraded
	}
	return s
}

// selects reports whether a (Cluster)PropagationPolicy's resourceSelectors match the object:
// same group and kind (Karmada serves the object in every version of its CRD), and the name,
// namespace and label selector where given.
func selects(p, u *unstructured.Unstructured) bool {
	if p.GetNamespace() != "" && p.GetNamespace() != u.GetNamespace() {
		return false
	}
	sels, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
	objGV, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	for _, raw := range sels {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		gv, err := schema.ParseGroupVersion(av)
		if err != nil || gv.Group != objGV.Group || kind != u.GetKind() {
			continue
		}
		if n, _ := m["name"].(string); n != "" && n != u.GetName() {
			continue
		}
		if ns, _ := m["namespace"].(string); ns != "" && ns != u.GetNamespace() {
			continue
		}
		if ls, ok := m["labelSelector"].(map[string]any); ok {
			var sel metav1.LabelSelector
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ls, &sel); err != nil {
				continue
			}
			s, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil || !s.Matches(labels.Set(u.GetLabels())) {
				continue
			}
		}
		return true
	}
	return false
}

func joinOr(ss []string, none string) string {
	if len(ss) == 0 {
		return none
	}
	out := ss[0]
	for _, s := range ss[1:] {
		out += "," + s
	}
	return out
}
