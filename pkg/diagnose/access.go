package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Access is one resource and the verbs `kubectl mcs sync` uses on it.
type Access struct {
	Group, Resource, Subresource string
	// Name: the verbs are granted on this object only ("": on all).
	Name  string
	Verbs []string
	// ClusterScoped resources are asked about without a namespace.
	ClusterScoped bool
	// LeaderElection: only needed with --leader-elect, in the Lease's cluster; missing verbs are
	// warnings.
	LeaderElection bool
}

// SyncAccess is what sync needs in every member: pkg/rbac's rules, the one list of them that the
// generated roles and the permissions table of docs/running-in-a-cluster.md come from too.
var SyncAccess = accessOf(rbac.SyncRules)

// clusterScoped are the resources of sync's rules that live outside namespaces.
var clusterScoped = map[string]bool{"namespaces": true, "customresourcedefinitions": true}

func accessOf(rules []rbac.Rule) []Access {
	var out []Access
	for _, r := range rules {
		res, sub, _ := strings.Cut(r.Resource, "/")
		a := Access{Group: r.Group, Resource: res, Subresource: sub, Verbs: r.Verbs,
			ClusterScoped: clusterScoped[res], LeaderElection: r.LeaseClusterOnly()}
		if len(r.ResourceNames) == 0 {
			out = append(out, a)
		}
		for _, n := range r.ResourceNames {
			a.Name = n
			out = append(out, a)
		}
	}
	return out
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

// checkRBAC lists, per member, the verbs sync needs that its identity lacks: the installed
// ServiceAccount's where sync is installed, else the current user's (a one-shot sync's).
func checkRBAC(s *Snapshot) []Result {
	var out []Result
	for _, m := range s.Clusters {
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
		who := "this user"
		grant := fmt.Sprintf("Grant the missing verbs to the user of context %q (a Role or ClusterRole bound to it), or run sync as a user who has them.", m.Context)
		if m.AccessAs != "" {
			who = "the installed sync's ServiceAccount " + names.SystemNamespace + "/" + syncApp
			grant = "Run `kubectl mcs install` again with the flags it was installed with: it writes the ClusterRole and bindings of " + syncApp + " as sync needs them."
		}
		switch {
		case len(missing) > 0:
			r.Severity = Fail
			r.Message = fmt.Sprintf("sync cannot run here as %s: missing %s (%s)", who, strings.Join(missing, ", "), where)
			r.Fix = grant
		case len(leader) > 0:
			r.Severity = Warn
			r.Message = fmt.Sprintf("every verb sync needs is allowed to %s, but not those of --leader-elect: missing %s", who, strings.Join(leader, ", "))
			r.Fix = "Grant them in the cluster that holds the Lease if sync runs with --leader-elect; otherwise nothing to do."
		default:
			r.Severity, r.Message = OK, fmt.Sprintf("every verb sync needs is allowed to %s (%d checked, %s)", who, len(m.Access), where)
		}
		out = append(out, r)
	}
	return out
}
