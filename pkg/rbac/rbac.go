// Package rbac is the one statement of what `kubectl mcs sync` needs in a member cluster: the
// rules the generated roles grant (`sync --print-manifests`), the permissions table of
// docs/running-in-a-cluster.md, and what a permissions check (diagnose) asks the apiserver about. Every verb here is one sync uses,
// and the e2e test removes each in turn to prove it is needed.
package rbac

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Scope says where a rule is granted.
type Scope string

const (
	// Cluster rules go in a ClusterRole bound cluster-wide: sync reads and writes in every
	// namespace (or the objects are cluster-scoped).
	Cluster Scope = "cluster"
	// LeaseNamespace rules go in a Role in the Lease namespace of the Lease cluster only (the
	// member `--leader-elect-context` names).
	LeaseNamespace Scope = "lease-namespace"
)

// LeaseName is the Lease that `sync --watch --leader-elect` holds.
const LeaseName = "kubectl-mcs-sync"

// Rule is one group/resource with the verbs sync uses on it.
type Rule struct {
	Group    string
	Resource string // with its subresource: "serviceimports/status"
	Verbs    []string
	// ResourceNames narrows get/update to the objects sync names (empty: all).
	ResourceNames []string
	Scope         Scope
	// OwnOnly: a sync --local reads it in its own member only, so no reader identity gets it.
	OwnOnly bool
	// Why says which part of sync uses it.
	Why string
}

// LeaseClusterOnly reports whether the rule belongs only in the Lease cluster.
func (r Rule) LeaseClusterOnly() bool { return r.Scope == LeaseNamespace }

// SyncRules is what `sync` (one pass, or --watch with --leader-elect) needs in a member. Informers
// list and watch; writes are plain creates (never taking an object over), server-side apply and
// the csaupgrade JSON patch (both "patch"; the JSON patch is made from the object read live with
// "get", since the caches keep only sync's own managedFields entries), deletes with a UID precondition; status goes through
// the status subresources; Events are created once per conflict change; the two mcs-api CRDs are
// read for their served schemas (without that right sync writes every field and says so);
// leader election gets, creates and updates one Lease.
var SyncRules = []Rule{
	{Group: "", Resource: "namespaces", Verbs: []string{"list", "watch"}, Scope: Cluster,
		Why: "imports go only to members that have the namespace; kube-system's UID is the member's identity, which the imports record"},
	{Group: "", Resource: "nodes", Verbs: []string{"list", "watch"}, Scope: Cluster, OwnOnly: true,
		Why: "the zones of the member's nodes, which a PreferSameCluster choice hints its copies with"},
	{Group: "", Resource: "services", Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}, Scope: Cluster,
		Why: "reads exported Services; writes derived-NAME"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verbs: []string{"list", "watch", "create", "patch", "delete"}, Scope: Cluster,
		Why: "reads the exporters' slices; writes their copies"},
	{Group: "multicluster.x-k8s.io", Resource: "serviceexports", Verbs: []string{"list", "watch"}, Scope: Cluster,
		Why: "reads ServiceExports"},
	{Group: "multicluster.x-k8s.io", Resource: "serviceexports/status", Verbs: []string{"patch"}, Scope: Cluster,
		Why: "sets the Valid, Ready and Conflict conditions"},
	{Group: "multicluster.x-k8s.io", Resource: "serviceimports", Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}, Scope: Cluster,
		Why: "writes ServiceImports"},
	{Group: "multicluster.x-k8s.io", Resource: "serviceimports/status", Verbs: []string{"patch"}, Scope: Cluster,
		Why: "sets status.clusters"},
	{Group: "", Resource: "events", Verbs: []string{"create"}, Scope: Cluster,
		Why: "an Event on a ServiceExport whose conflict state changes"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verbs: []string{"get"}, Scope: Cluster,
		ResourceNames: []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"},
		Why:           "the served mcs-api schemas, so that each member gets only the fields it declares"},
	{Group: "about.k8s.io", Resource: "clusterproperties", Verbs: []string{"get"}, Scope: Cluster,
		ResourceNames: []string{"cluster.clusterset.k8s.io"},
		Why:           "the member's cluster ID, from its ClusterProperty when it has one"},
	{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"create"}, Scope: LeaseNamespace,
		Why: "--leader-elect: the first replica creates the Lease"},
	{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "update"}, ResourceNames: []string{LeaseName}, Scope: LeaseNamespace,
		Why: "--leader-elect: reads, takes and renews the Lease"},
}

// DNSServerRules is what `kubectl mcs dns-server` needs in its member (`dns-server
// --print-manifests`): it only reads, through informers, the two kinds it answers from. The
// mcs-api discovery it asks first is open to every user.
var DNSServerRules = []Rule{
	{Group: "multicluster.x-k8s.io", Resource: "serviceimports", Verbs: []string{"get", "list", "watch"}, Scope: Cluster,
		Why: "answers NAME.NS.svc.clusterset.local from the member's ServiceImports"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verbs: []string{"get", "list", "watch"}, Scope: Cluster,
		Why: "answers a Headless service's endpoints from the slices sync copied"},
}

// ReaderRules is what a member's reader identity may do in another member, for the per-member
// syncs that read it (`install --mode=per-member`): the get, list and watch of SyncRules' cluster
// rules, without the subresources, Events and Leases sync only writes, and the Nodes it reads in
// its own member only. Derived from SyncRules so
// that a new read of sync's is a new read of the readers'; never a write, never a Secret.
func ReaderRules() []Rule {
	var out []Rule
	for _, r := range SyncRules {
		if r.Scope != Cluster || r.OwnOnly || strings.Contains(r.Resource, "/") || r.Resource == "events" {
			continue
		}
		var verbs []string
		for _, v := range r.Verbs {
			if v == "get" || v == "list" || v == "watch" {
				verbs = append(verbs, v)
			}
		}
		if len(verbs) > 0 {
			r.Verbs, r.ResourceNames = verbs, slices.Clone(r.ResourceNames)
			out = append(out, r)
		}
	}
	return out
}

// PolicyRules turns the rules of one scope into RBAC policy rules, in SyncRules' order.
func PolicyRules(rules []Rule, scope Scope) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if r.Scope != scope {
			continue
		}
		out = append(out, rbacv1.PolicyRule{
			APIGroups:     []string{r.Group},
			Resources:     []string{r.Resource},
			Verbs:         append([]string(nil), r.Verbs...),
			ResourceNames: append([]string(nil), r.ResourceNames...),
		})
	}
	return out
}

// Permission is one verb on one resource: the unit a check asks about and the e2e test removes.
type Permission struct {
	Rule int // index in the rule list
	Verb string
}

// Permissions lists every verb of every rule.
func Permissions(rules []Rule) []Permission {
	var out []Permission
	for i, r := range rules {
		for _, v := range r.Verbs {
			out = append(out, Permission{Rule: i, Verb: v})
		}
	}
	return out
}

// Without returns a copy of rules with one verb taken out (the rule goes when it has no verb
// left).
func Without(rules []Rule, p Permission) []Rule {
	var out []Rule
	for i, r := range rules {
		if i == p.Rule {
			var verbs []string
			for _, v := range r.Verbs {
				if v != p.Verb {
					verbs = append(verbs, v)
				}
			}
			if len(verbs) == 0 {
				continue
			}
			r.Verbs = verbs
		}
		out = append(out, r)
	}
	return out
}
