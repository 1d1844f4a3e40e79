package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// Access is one resource and the verbs `kubectl mcs sync` uses on it.
type Access struct {
	Group, Resource, Subresource string
	Verbs                        []string
	// ClusterScoped resources are asked about without a namespace.
	ClusterScoped bool
	// LeaderElection: only needed with --leader-elect, in the Lease's cluster; missing verbs are
	// warnings.
	LeaderElection bool
}

// SyncAccess is what sync needs in every member, read off pkg/sync/reconciler (cache.go's
// informers, write.go's writeKinds and their create/apply/delete, report.go's Events, the schema
// read of cache.go) and pkg/cmd/synccmd/leader.go (the Lease). One variable, so that it can be
// pointed at the shared least-privilege rule set of sync --print-manifests.
var SyncAccess = []Access{
	{Resource: "namespaces", Verbs: []string{"list", "watch"}, ClusterScoped: true},
	{Resource: "services", Verbs: []string{"list", "watch", "create", "patch", "delete"}},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verbs: []string{"list", "watch", "create", "patch", "delete"}},
	{Group: mcsapi.Group, Resource: mcsapi.ServiceExports, Verbs: []string{"list", "watch"}},
	{Group: mcsapi.Group, Resource: mcsapi.ServiceExports, Subresource: "status", Verbs: []string{"patch"}},
	{Group: mcsapi.Group, Resource: mcsapi.ServiceImports, Verbs: []string{"list", "watch", "create", "patch", "delete"}},
	{Resource: "events", Verbs: []string{"create"}},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verbs: []string{"get"}, ClusterScoped: true},
	{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "create", "update"}, LeaderElection: true},
}

// AccessAnswer is one SelfSubjectAccessReview's answer.
type AccessAnswer struct {
	Access
	Verb      string
	Namespace string
	Allowed   bool
	Reason    string
}

// String is how a missing permission is named: "delete endpointslices.discovery.k8s.io".
func (a AccessAnswer) String() string {
	r := a.Resource
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	return a.Verb + " " + r
}

// checkRBAC lists, per member, the verbs sync needs that the current user lacks.
func checkRBAC(s *Snapshot) []Result {
	var out []Result
	for _, m := range s.Members {
		if !readable(m) {
			continue
		}
		r := Result{Check: CheckRBAC, Cluster: m.ID, Object: "sync permissions"}
		if m.AccessErr != "" {
			r.Severity, r.Message = Warn, "could not ask the API server what this user may do: "+m.AccessErr
			r.Fix = "Allow create on selfsubjectaccessreviews.authorization.k8s.io (every user has it by default) and run diagnose again."
			out = append(out, r)
			continue
		}
		var missing, leader []string
		for _, a := range m.Access {
			if a.Allowed {
				continue
			}
			if a.LeaderElection {
				leader = append(leader, a.String())
			} else {
				missing = append(missing, a.String())
			}
		}
		sort.Strings(missing)
		sort.Strings(leader)
		where := "cluster-wide"
		if s.Namespace != "" {
			where = "in namespace " + s.Namespace
		}
		switch {
		case len(missing) > 0:
			r.Severity = Fail
			r.Message = fmt.Sprintf("sync cannot run here as this user: missing %s (%s)", strings.Join(missing, ", "), where)
			r.Fix = fmt.Sprintf("Grant the missing verbs to the user of context %q (a Role or ClusterRole bound to it), or run sync as a user who has them.", m.Context)
		case len(leader) > 0:
			r.Severity = Warn
			r.Message = fmt.Sprintf("every verb sync needs is allowed, but not those of --leader-elect: missing %s", strings.Join(leader, ", "))
			r.Fix = "Grant them in the cluster that holds the Lease if sync runs with --leader-elect; otherwise nothing to do."
		default:
			r.Severity, r.Message = OK, fmt.Sprintf("every verb sync needs is allowed (%d checked, %s)", len(m.Access), where)
		}
		out = append(out, r)
	}
	return out
}
