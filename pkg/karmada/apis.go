package karmada

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CompleteAPIEnablements is the Cluster condition saying whether status.apiEnablements lists
// every API the member serves (Karmada v1.12 on; older Karmada sets no such condition).
const CompleteAPIEnablements = "CompleteAPIEnablements"

// Requirement is an API that Clusters must serve for what expose writes to reach them. Karmada's
// scheduler places an object only in members whose Cluster status.apiEnablements lists its group,
// version and kind (its APIEnablement filter), so a member without it leaves the ResourceBinding
// unscheduled for ever; its MultiClusterService controllers likewise skip a member without
// EndpointSlices.
type Requirement struct {
	GroupVersion, Kind string
	Clusters           []string
	// For says what sends it there, for the message: "PropagationPolicy web-export-policy
	// places ServiceExport web there".
	For string
}

// MemberAPIs is what one Cluster's status says its member serves.
type MemberAPIs struct {
	Name string
	// Kinds are "group/version kind" (core: "v1 Service") as status.apiEnablements lists them.
	Kinds map[string]bool
	// Partial: the CompleteAPIEnablements condition is False, so Karmada may not have collected
	// every API yet (an empty list is never complete).
	Partial bool
}

// MemberAPIsOf reads a Cluster (cluster.karmada.io/v1alpha1).
func MemberAPIsOf(c *unstructured.Unstructured) MemberAPIs {
	m := MemberAPIs{Name: c.GetName(), Kinds: map[string]bool{}}
	list, _, _ := unstructured.NestedSlice(c.Object, "status", "apiEnablements")
	for _, e := range list {
		em, _ := e.(map[string]any)
		gv, _ := em["groupVersion"].(string)
		rs, _ := em["resources"].([]any)
		for _, r := range rs {
			rm, _ := r.(map[string]any)
			if k, _ := rm["kind"].(string); k != "" {
				m.Kinds[gv+" "+k] = true
			}
		}
	}
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, x := range conds {
		cm, _ := x.(map[string]any)
		if cm["type"] == CompleteAPIEnablements && cm["status"] == "False" {
			m.Partial = true
		}
	}
	if len(m.Kinds) == 0 {
		m.Partial = true
	}
	return m
}

// Unserved is a member that does not serve (or, Unknown, may not serve yet) an API a
// Requirement names.
type Unserved struct {
	Cluster, GroupVersion, Kind, For string
	// Unknown: Karmada has not collected the member's APIs (none listed), or only some of them;
	// the API may be served without Karmada knowing yet.
	Unknown bool
	// Collected is how many group/version kinds the Cluster lists, for the message.
	Collected int
}

// Group is the API group of GroupVersion ("" for core).
func (u Unserved) Group() string {
	g, _, ok := strings.Cut(u.GroupVersion, "/")
	if !ok {
		return ""
	}
	return g
}

func (u Unserved) String() string {
	if u.Unknown {
		how := "has not collected the APIs it serves yet (its Cluster lists none)"
		if u.Collected > 0 {
			how = fmt.Sprintf("has collected only some of the APIs it serves (%d; %s is False)", u.Collected, CompleteAPIEnablements)
		}
		return fmt.Sprintf("member cluster %q: Karmada %s; it places %s %s there (%s) only once the Cluster lists it",
			u.Cluster, how, u.GroupVersion, u.Kind, u.For)
	}
	return fmt.Sprintf("member cluster %q does not serve %s %s (%s)", u.Cluster, u.GroupVersion, u.Kind, u.For)
}

// Fixes says, once per API group, how the members of unserved come to serve it.
func Fixes(unserved []Unserved) []string {
	var groups []string
	clusters := map[string][]string{}
	for _, u := range unserved {
		g := u.Group()
		if _, ok := clusters[g]; !ok {
			groups = append(groups, g)
		}
		if !slices.Contains(clusters[g], u.Cluster) {
			clusters[g] = append(clusters[g], u.Cluster)
		}
	}
	var out []string
	for _, g := range groups {
		cs := strings.Join(clusters[g], ",")
		switch g {
		case "multicluster.x-k8s.io":
			out = append(out, fmt.Sprintf("Install the mcs-api CRDs in %s: kubectl mcs init --contexts=%s (the members' own kubeconfig contexts), "+
				"or propagate them from the control plane with a ClusterPropagationPolicy (Karmada's multi-cluster service discovery guide); "+
				"Karmada lists them at its next cluster status update.", cs, cs))
		case "discovery.k8s.io":
			out = append(out, fmt.Sprintf("EndpointSlices are served from Kubernetes v1.21: upgrade %s.", cs))
		default:
			out = append(out, fmt.Sprintf("Install the CRDs that serve %s in %s.", g, cs))
		}
	}
	return out
}

// CheckAPIs returns, for every Requirement, each cluster that does not serve its API (Unknown
// when Karmada does not list every API the member serves), in the order of reqs and their
// clusters. A cluster absent from members is not checked: it is not a member (refused elsewhere)
// or the Cluster API could not be read.
func CheckAPIs(members map[string]MemberAPIs, reqs []Requirement) []Unserved {
	var out []Unserved
	for _, r := range reqs {
		for _, c := range r.Clusters {
			m, ok := members[c]
			if !ok || m.Kinds[r.GroupVersion+" "+r.Kind] {
				continue
			}
			u := Unserved{Cluster: c, GroupVersion: r.GroupVersion, Kind: r.Kind, For: r.For, Unknown: m.Partial, Collected: len(m.Kinds)}
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// PolicyRequirements are the APIs a PropagationPolicy built by PropagationPolicy needs in the
// clusters it names: each selected resource's.
func PolicyRequirements(pp *unstructured.Unstructured) []Requirement {
	names, _, _ := unstructured.NestedStringSlice(pp.Object, "spec", "placement", "clusterAffinity", "clusterNames")
	sels, _, _ := unstructured.NestedSlice(pp.Object, "spec", "resourceSelectors")
	var out []Requirement
	for _, s := range sels {
		sm, _ := s.(map[string]any)
		av, _ := sm["apiVersion"].(string)
		kind, _ := sm["kind"].(string)
		name, _ := sm["name"].(string)
		out = append(out, Requirement{GroupVersion: av, Kind: kind, Clusters: names,
			For: fmt.Sprintf("PropagationPolicy %s places %s %s there", pp.GetName(), kind, name)})
	}
	return out
}
