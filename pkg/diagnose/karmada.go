package diagnose

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// dispatchedAnnotation marks the EndpointSlices Karmada's MultiClusterService controllers copy
// into consumer clusters (the provider's name).
const dispatchedAnnotation = "endpointslice.karmada.io/provision-cluster"

func (s *Snapshot) selected(ns, name string) bool {
	return (s.Namespace == "" || s.Namespace == ns) && (s.Service == "" || s.Service == name)
}

// checkKarmada: the control plane's MultiClusterServices, ServiceExports and ServiceImports, as
// status --karmada judges them (conditions, PropagationPolicies placing them).
func checkKarmada(s *Snapshot) []Result {
	k := s.Karmada
	if k == nil {
		return nil
	}
	if k.Err != "" {
		return []Result{{Check: CheckKarmada, Cluster: k.Context, Object: "context/" + k.Context, Severity: Fail,
			Message: "the Karmada control plane could not be read: " + k.Err,
			Fix:     fmt.Sprintf("Check that context %q points at the karmada-apiserver and that it is up.", k.Context)}}
	}
	var out []Result
	add := func(kind, ns, name string, h status.Health, problems []string, ok string) {
		if !s.selected(ns, name) {
			return
		}
		r := Result{Check: CheckKarmada, Cluster: k.Context, Object: kind + "/" + ns + "/" + name, Severity: OK, Message: ok}
		switch h {
		case status.Healthy:
		case status.Unknown:
			r.Severity, r.Message = Warn, "no Karmada controller has reported on it yet"
			r.Fix = "Check that karmada-controller-manager runs with --feature-gates=MultiClusterService=true."
		default:
			r.Severity, r.Message = Fail, strings.Join(problems, " ")
			r.Fix, r.Commands = karmadaFix(k.Context, kind, ns, name, problems)
		}
		out = append(out, r)
	}
	for _, m := range k.Status.MultiClusterServices {
		add("multiclusterservice", m.Namespace, m.Name, m.Health, m.Problems, "conditions "+conditionList(m.Conditions))
	}
	for _, o := range k.Status.ServiceExports {
		add("serviceexport", o.Namespace, o.Name, o.Health, o.Problems, "placed in "+listOr(o.PlacedIn))
	}
	for _, o := range k.Status.ServiceImports {
		add("serviceimport", o.Namespace, o.Name, o.Health, o.Problems, "placed in "+listOr(o.PlacedIn))
	}
	return out
}

func karmadaFix(ctx, kind, ns, name string, problems []string) (string, []shell.Command) {
	all := strings.Join(problems, " ")
	switch {
	case strings.Contains(all, "PropagationPolicy") || strings.Contains(all, "PropagationPolicies"):
		return "Place it with a PropagationPolicy, which expose writes:", []shell.Command{karmadaExposeCommand(ctx, ns, name)}
	case strings.Contains(all, "No Service"):
		return fmt.Sprintf("Create the Service %s/%s on the control plane (context %q).", ns, name, ctx), nil
	case strings.Contains(all, "No ServiceExport"):
		return "Export it on the control plane:", []shell.Command{karmadaExposeCommand(ctx, ns, name)}
	case strings.Contains(all, "Karmada has not scheduled"):
		// The scheduler's message names the filter that left no member.
		return "Karmada's scheduler found no member for it; its message says why, most often a member that does not serve the object's API (the mcs-api CRDs, which init installs). See what each member serves:",
			[]shell.Command{shell.Kubectl("--context", ctx, "get", "clusters.cluster.karmada.io", "-o", "yaml")}
	}
	return "Read its conditions and events:", []shell.Command{karmadaDescribeCommand(ctx, kind, ns, name)}
}

func conditionList(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, c.Type+"="+string(c.Status))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// checkKarmadaPlacement: what Karmada placed arrived in the member clusters: for a ServiceImport,
// the derived Service and its slices; for a MultiClusterService, the Service and the slices
// dispatched from the other providers.
func checkKarmadaPlacement(s *Snapshot, objs []*objects) []Result {
	k := s.Karmada
	if k == nil || k.Status == nil {
		return nil
	}
	byID := map[string]int{}
	var all []string
	for i, m := range s.Clusters {
		byID[m.ID] = i
		all = append(all, m.ID)
	}
	var out []Result
	for _, si := range k.Status.ServiceImports {
		if !s.selected(si.Namespace, si.Name) {
			continue
		}
		derived := names.DerivedServiceName(si.Name)
		for _, c := range si.PlacedIn {
			i, ok := byID[c]
			if !ok || !readable(s.Clusters[i]) {
				continue
			}
			dk := key{Namespace: si.Namespace, Name: derived}
			r := Result{Check: CheckKarmadaPlaced, Cluster: c, Object: objectName("service", dk), Severity: OK}
			switch {
			case objs[i].services[dk] == nil:
				r.Severity, r.Message = Fail, fmt.Sprintf("Karmada places ServiceImport %s/%s here but the derived Service %s does not exist", si.Namespace, si.Name, derived)
				r.Fix = fmt.Sprintf("Check Karmada's ServiceImport controller (karmada-controller-manager log) and the Work for %q.", c)
			case len(objs[i].slices[dk]) == 0:
				r.Severity, r.Message = Fail, fmt.Sprintf("the derived Service %s has no EndpointSlices: Karmada has not collected the providers' endpoints", derived)
				r.Fix = "Check that the providers' ServiceExports are placed and that karmada-controller-manager runs its endpointslice controllers."
			default:
				r.Message = fmt.Sprintf("derived Service and %d EndpointSlice(s) present", len(objs[i].slices[dk]))
			}
			out = append(out, r)
		}
	}
	for _, m := range k.Status.MultiClusterServices {
		if !s.selected(m.Namespace, m.Name) {
			continue
		}
		providers, consumers := orAll(m.ProviderClusters, all), orAll(m.ConsumerClusters, all)
		sk := key{Namespace: m.Namespace, Name: m.Name}
		for _, c := range consumers {
			i, ok := byID[c]
			if !ok || !readable(s.Clusters[i]) {
				continue
			}
			r := Result{Check: CheckKarmadaPlaced, Cluster: c, Object: objectName("service", sk), Severity: OK}
			dispatched := 0
			for _, sl := range objs[i].slices[sk] {
				if sl.Annotations[dispatchedAnnotation] != "" {
					dispatched++
				}
			}
			switch {
			case objs[i].services[sk] == nil:
				r.Severity, r.Message = Fail, fmt.Sprintf("a consumer of MultiClusterService %s/%s without the Service", m.Namespace, m.Name)
				r.Fix = "Check the MultiClusterService's ServiceApplied condition and Karmada's Works for this cluster."
			case len(without(providers, c)) > 0 && dispatched == 0:
				r.Severity, r.Message = Fail, fmt.Sprintf("no EndpointSlice dispatched from the providers %s", quoted(without(providers, c)))
				r.Fix = "Check the MultiClusterService's EndpointSliceDispatched condition and that the providers' Services have endpoints."
			default:
				r.Message = fmt.Sprintf("Service present, %d dispatched EndpointSlice(s)", dispatched)
			}
			out = append(out, r)
		}
	}
	return out
}

func orAll(ss, all []string) []string {
	if len(ss) == 0 {
		return all
	}
	return ss
}
