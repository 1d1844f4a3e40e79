package install

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// SyncPodSelector selects the pods of sync's Deployment, in either mode.
const SyncPodSelector = appLabel + "=" + Name

// Installed is every object that `install`, in either mode, as the host or as a member, holding
// the Lease or not, can have written in cluster id of the clusterset ids: built by the very
// builders install applies, so that what `uninstall` removes cannot drift from what install
// writes. Whatever mode ran (or both, after a move between them), one list covers it; what is
// not there is skipped. The Namespace, which sync and the DNS server share, is left out: it goes
// last, and only when nothing else is in it.
func Installed(ids []string, id string) []runtime.Object {
	// Every member holding the Lease: its Role may be in any of them (--leader-elect-context).
	members := make([]DeployedMember, len(ids))
	for i, m := range ids {
		members[i] = DeployedMember{ID: m, Lease: true}
	}
	self := DeployedMember{ID: id, Lease: true}
	host := Config{Namespace: DefaultNamespace, Members: members}
	local := host
	local.Local = id
	var all []runtime.Object
	all = append(all, MemberObjects(host, self, rbac.SyncRules)...)
	all = append(all, MemberObjects(local, self, rbac.SyncRules)...)
	all = append(all, HostObjects(host, nil)...)
	all = append(all, HostObjects(local, nil)...)
	all = append(all, PolicyObjects(DefaultNamespace)...)
	return withoutNamespaces(all)
}

// DNSServerInstalled is what `dns-server --print-manifests` writes in a member, but for the
// Namespace (see Installed).
func DNSServerInstalled() []runtime.Object {
	return withoutNamespaces(DNSServerObjects(DNSServerConfig{}))
}

// withoutNamespaces drops the Namespaces and every object a second time (same kind, namespace
// and name), keeping the first.
func withoutNamespaces(objs []runtime.Object) []runtime.Object {
	seen := map[string]bool{}
	var out []runtime.Object
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		m, err := apimeta.Accessor(o)
		if err != nil || kind == "Namespace" {
			continue
		}
		key := kind + "/" + m.GetNamespace() + "/" + m.GetName()
		if !seen[key] {
			seen[key] = true
			out = append(out, o)
		}
	}
	return out
}

// ResourceOf is the resource of a kind generated here.
func ResourceOf(kind string) (schema.GroupVersionResource, bool) {
	if kind == "Service" { // the DNS server's, which install's apply path never writes
		return schema.GroupVersionResource{Version: "v1", Resource: "services"}, true
	}
	gvr, ok := resources[kind]
	return gvr, ok
}
