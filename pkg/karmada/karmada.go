// Package karmada builds the Karmada objects `expose --karmada` writes (MultiClusterService,
// PropagationPolicy) and validates them the way Karmada's admission webhook does, so that bad input
// fails before anything is sent.
package karmada

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

var (
	MultiClusterServices = schema.GroupVersionResource{Group: "networking.karmada.io", Version: "v1alpha1", Resource: "multiclusterservices"}
	PropagationPolicies  = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
	// Clusters are the member clusters, served by karmada-aggregated-apiserver.
	Clusters = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
)

// Exposure types of a MultiClusterService.
const (
	TypeCrossCluster = "CrossCluster"
	TypeLoadBalancer = "LoadBalancer"
)

// Port is one entry of MultiClusterService spec.ports.
type Port struct {
	Name string
	Port int32
}

// ParsePorts parses "NAME:PORT,..." (NAME may be empty: ":80" or "80").
func ParsePorts(items []string) ([]Port, error) {
	var out []Port
	for _, it := range items {
		name, num := "", it
		if i := strings.LastIndex(it, ":"); i >= 0 {
			name, num = it[:i], it[i+1:]
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("--ports: %q: port %q is not a number (want NAME:PORT)", it, num)
		}
		if n < 1 || n > 65535 {
			return nil, fmt.Errorf("--ports: %q: port %d is out of range 1-65535", it, n)
		}
		out = append(out, Port{Name: name, Port: int32(n)})
	}
	return out, nil
}

// MCSSpec is what a MultiClusterService says.
type MCSSpec struct {
	Namespace, Name string
	Types           []string
	Ports           []Port
	Providers       []string
	Consumers       []string
}

// Validate applies the rules of Karmada's MultiClusterService webhook.
func (s MCSSpec) Validate() error {
	if errs := validation.IsDNS1035Label(s.Name); len(errs) > 0 {
		return fmt.Errorf("multiclusterservice %s/%s: name must be a DNS-1035 label like a Service name: %s", s.Namespace, s.Name, errs[0])
	}
	if len(s.Types) == 0 {
		return fmt.Errorf("multiclusterservice %s/%s: at least one --type is required", s.Namespace, s.Name)
	}
	seen := map[string]bool{}
	for _, t := range s.Types {
		if t != TypeCrossCluster && t != TypeLoadBalancer {
			return fmt.Errorf("multiclusterservice %s/%s: --type %q: must be %s or %s", s.Namespace, s.Name, t, TypeCrossCluster, TypeLoadBalancer)
		}
		if seen[t] {
			return fmt.Errorf("multiclusterservice %s/%s: --type %q given twice", s.Namespace, s.Name, t)
		}
		seen[t] = true
	}
	portNames := map[string]bool{}
	for _, p := range s.Ports {
		if p.Port < 1 || p.Port > 65535 {
			return fmt.Errorf("multiclusterservice %s/%s: port %d is out of range 1-65535", s.Namespace, s.Name, p.Port)
		}
		if p.Name != "" {
			if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
				return fmt.Errorf("multiclusterservice %s/%s: port name %q: %s", s.Namespace, s.Name, p.Name, errs[0])
			}
		}
		if portNames[p.Name] {
			return fmt.Errorf("multiclusterservice %s/%s: port name %q is used twice (port names must be unique)", s.Namespace, s.Name, p.Name)
		}
		portNames[p.Name] = true
	}
	if err := ValidateClusters("--providers", s.Providers); err != nil {
		return err
	}
	return ValidateClusters("--consumers", s.Consumers)
}

// ClusterNameMaxLength is the longest cluster name Karmada accepts (its cluster validation, which
// karmada-webhook applies to a MultiClusterService's provider and consumer clusters): shorter
// than a DNS-1123 label.
const ClusterNameMaxLength = 48

// ValidateClusters checks Karmada cluster names: DNS-1123 labels of at most 48 characters, no
// duplicates.
func ValidateClusters(flag string, clusters []string) error {
	seen := map[string]bool{}
	for _, c := range clusters {
		if len(c) > ClusterNameMaxLength {
			return fmt.Errorf("%s: cluster name %q is not valid: must be no more than %d characters (Karmada's limit)", flag, c, ClusterNameMaxLength)
		}
		if errs := validation.IsDNS1123Label(c); len(errs) > 0 {
			return fmt.Errorf("%s: cluster name %q is not valid: %s", flag, c, errs[0])
		}
		if seen[c] {
			return fmt.Errorf("%s: cluster %q is listed twice", flag, c)
		}
		seen[c] = true
	}
	return nil
}

// MultiClusterService builds the object; call Validate first.
func (s MCSSpec) MultiClusterService() *unstructured.Unstructured {
	spec := map[string]any{"types": toAny(s.Types)}
	if len(s.Ports) > 0 {
		var ports []any
		for _, p := range s.Ports {
			e := map[string]any{"port": int64(p.Port)}
			if p.Name != "" {
				e["name"] = p.Name
			}
			ports = append(ports, e)
		}
		spec["ports"] = ports
	}
	if len(s.Providers) > 0 {
		spec["providerClusters"] = clusterList(s.Providers)
	}
	if len(s.Consumers) > 0 {
		spec["consumerClusters"] = clusterList(s.Consumers)
	}
	return object(MultiClusterServices, "MultiClusterService", s.Namespace, s.Name, spec)
}

// Selector names one resource a PropagationPolicy places.
type Selector struct {
	APIVersion, Kind, Name string
}

// PropagationPolicy places the selected resources in exactly the given clusters.
func PropagationPolicy(ns, name string, selectors []Selector, clusters []string) *unstructured.Unstructured {
	var sel []any
	for _, s := range selectors {
		sel = append(sel, map[string]any{"apiVersion": s.APIVersion, "kind": s.Kind, "name": s.Name})
	}
	cl := append([]string(nil), clusters...)
	sort.Strings(cl)
	spec := map[string]any{
		"resourceSelectors": sel,
		"placement":         map[string]any{"clusterAffinity": map[string]any{"clusterNames": toAny(cl)}},
	}
	return object(PropagationPolicies, "PropagationPolicy", ns, name, spec)
}

// PolicyName derives a PropagationPolicy name like Karmada's guide does ("serve-export-policy").
func PolicyName(service, purpose string) string {
	return names.Truncate(service+"-"+purpose+"-policy", validation.DNS1123SubdomainMaxLength, service+"/"+purpose)
}

func object(gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       kind,
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
			"labels":    map[string]any{names.ManagedByLabel: names.ManagedByValue},
		},
		"spec": spec,
	}}
	return u
}

func clusterList(cs []string) []any {
	var out []any
	for _, c := range cs {
		out = append(out, map[string]any{"name": c})
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// UnknownClusters returns the names in want that are not in members, in the order given.
func UnknownClusters(want, members []string) []string {
	have := map[string]bool{}
	for _, m := range members {
		have[m] = true
	}
	var out []string
	for _, w := range want {
		if !have[w] {
			out = append(out, w)
		}
	}
	return out
}
