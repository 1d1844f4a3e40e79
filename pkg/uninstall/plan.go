package uninstall

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Step is one stage of an uninstall. Every cluster finishes a step before any starts the next,
// so that no cluster's CoreDNS still forwards to a DNS server that is gone, and no sync is left
// to write again what the sync objects' step deletes.
type Step int

const (
	// StepCorefile removes init --dns's block from every member's Corefile: CoreDNS stops
	// forwarding the clusterset zone before the DNS server it forwards to goes.
	StepCorefile Step = iota
	// StepDNSServer deletes what dns-server --print-manifests wrote.
	StepDNSServer
	// StepSync deletes the syncs and their identities (install, both modes).
	StepSync
	// StepSyncObjects deletes what sync wrote (--sync-objects).
	StepSyncObjects
	// StepCRDs deletes the mcs-api CRDs (--crds).
	StepCRDs
	// StepNamespace deletes kubectl-mcs-system where nothing of the user's is left in it.
	StepNamespace
)

// Steps are the steps an uninstall takes, in order.
func Steps(syncObjects, crds bool) []Step {
	out := []Step{StepCorefile, StepDNSServer, StepSync}
	if syncObjects || crds {
		out = append(out, StepSyncObjects)
	}
	if crds {
		out = append(out, StepCRDs)
	}
	return append(out, StepNamespace)
}

// deleteRank orders the deletions of a step: what runs first (its pods stop acting), then its
// credentials and rights, and last the admission policy, which confines the writer as long as
// any of its tokens may still be valid.
var deleteRank = map[string]int{
	"Deployment":                       0,
	"PodDisruptionBudget":              1,
	"Service":                          2,
	"Secret":                           3,
	"ServiceAccount":                   4,
	"RoleBinding":                      5,
	"Role":                             6,
	"ClusterRoleBinding":               7,
	"ClusterRole":                      8,
	"ValidatingAdmissionPolicyBinding": 9,
	"ValidatingAdmissionPolicy":        10,
}

// Ordered are objs as uninstall deletes them: by deleteRank, then by namespace and name, so that
// the output is the same every time. A kind without a rank is a programming error: a new kind in
// install's builders needs its place here (a unit test holds every one).
func Ordered(objs []runtime.Object) ([]*unstructured.Unstructured, error) {
	us, err := install.Unstructured(objs)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if _, ok := deleteRank[u.GetKind()]; !ok {
			return nil, fmt.Errorf("no deletion order known for kind %s", u.GetKind())
		}
	}
	sort.SliceStable(us, func(i, j int) bool {
		a, b := us[i], us[j]
		if ra, rb := deleteRank[a.GetKind()], deleteRank[b.GetKind()]; ra != rb {
			return ra < rb
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	return us, nil
}

// Exports are the ServiceExports of one cluster, as "NAMESPACE/NAME".
type Exports struct {
	Cluster string
	Names   []string
}

// Refusal is the error of --crds while ServiceExports exist and --force was not given: one line
// per cluster holding any, naming each; nil when none does.
func Refusal(found []Exports) error {
	var lines []string
	n := 0
	for _, e := range found {
		if len(e.Names) == 0 {
			continue
		}
		n += len(e.Names)
		ns := slices.Sorted(slices.Values(e.Names))
		lines = append(lines, fmt.Sprintf("  cluster %q: %s", e.Cluster, strings.Join(ns, ", ")))
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("refusing to delete the mcs-api CRDs: %d ServiceExport(s) exist, which would be deleted with them "+
		"(kubectl mcs unexpose each, or pass --force to delete them with the CRDs); nothing was changed:\n%s",
		n, strings.Join(lines, "\n"))
}

// ignoredResources hold nothing a user put in the namespace by hand: Events, and what the
// controllers derive from Services.
var ignoredResources = map[string]bool{"events": true, "endpoints": true, "endpointslices": true}

// Foreign says whether an object found in kubectl-mcs-system is someone else's, which keeps the
// namespace: not ours (labels), not owned by another object (a pod of our Deployment, ...), and
// none of what Kubernetes or sync puts in every such namespace (kube-root-ca.crt, the default
// ServiceAccount, sync's Lease, which client-go's leader election creates unlabelled).
func Foreign(resource string, u *unstructured.Unstructured) bool {
	if ignoredResources[resource] || names.IsManaged(u.GetLabels()) || len(u.GetOwnerReferences()) > 0 {
		return false
	}
	switch resource + "/" + u.GetName() {
	case "configmaps/kube-root-ca.crt", "serviceaccounts/default", "leases/" + rbac.LeaseName:
		return false
	}
	return true
}

// isDerivedService says whether a Service is one sync made for an import: ours, named derived-.
func isDerivedService(u *unstructured.Unstructured) bool {
	return names.IsManaged(u.GetLabels()) && strings.HasPrefix(u.GetName(), names.DerivedServiceName(""))
}
