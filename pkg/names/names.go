// Package names holds the labels, annotations and object names that kubectl-mcs writes, so that
// every command and the sync engine agree on them.
package names

import (
	"crypto/sha256"
	"encoding/hex"
)

const (
	// FieldManager is the default server-side apply field manager.
	FieldManager = "kubectl-mcs"

	// ManagedByLabel marks every object the plugin created; nothing without it is ever changed.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "kubectl-mcs"

	// EndpointSliceManagedByLabel is the EndpointSlice API's own ownership label. Our value must
	// differ from the in-tree controller's so that it leaves our slices alone.
	EndpointSliceManagedByLabel = "endpointslice.kubernetes.io/managed-by"
	EndpointSliceManagedByValue = "kubectl-mcs"

	// DerivedServiceAnnotation on a ServiceImport names the derived Service behind it.
	DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"

	// SourceClusterUIDsAnnotation on a ServiceImport records, for each cluster its status.clusters
	// names, that cluster's own identity: "ID=UID,..." sorted by ID, UID the cluster's kube-system
	// namespace UID (KEP-2149), which no change of cluster ID touches. A cluster named there by an
	// ID no member has any more, whose UID is a member's, is that member under its former ID.
	SourceClusterUIDsAnnotation = "mcs.kubectl.io/source-cluster-uids"

	// TrafficDistributionAnnotation on a member's ServiceExport (`expose --traffic-distribution`)
	// says how that member's kube-proxies pick among the clusterset's endpoints of the service;
	// PreferSameCluster is the one value: its own cluster's ready endpoints while one exists.
	TrafficDistributionAnnotation = "mcs.kubectl.io/traffic-distribution"
	PreferSameCluster             = "PreferSameCluster"
	// OtherClusterZone is the zone hint, in a member with that choice, of the other clusters'
	// endpoints: a valid zone name that no node of the member has. Sync writes it; the DNS server
	// reads it to tell the member's own endpoints from the others'.
	OtherClusterZone = "kubectl-mcs-other-cluster"

	// SystemNamespace holds what runs in a cluster: sync's Deployment (`sync --print-manifests`)
	// and each member's DNS server (`dns-server --print-manifests`).
	SystemNamespace = "kubectl-mcs-system"
	// DNSServerName names the DNS server's ServiceAccount, ClusterRole(Binding), Deployment and
	// Service; `init --dns` forwards the clusterset zone to that Service's ClusterIP.
	DNSServerName = "kubectl-mcs-dns"

	derivedPrefix = "derived-"
	maxLabelLen   = 63
	hashLen       = 10
)

// DerivedServiceName is Karmada's "derived-NAME"; names that would pass the 63-character DNS label
// limit are truncated and suffixed with a short hash so that distinct services stay distinct.
func DerivedServiceName(service string) string {
	return Truncate(derivedPrefix+service, maxLabelLen, service)
}

// Truncate returns name if it fits in max characters, else a prefix of it plus "-" and a hash of
// key, max characters in all. The cut never leaves a trailing '-' before the hash.
func Truncate(name string, max int, key string) string {
	if len(name) <= max {
		return name
	}
	h := Hash(key)
	prefix := name[:max-hashLen-1]
	for len(prefix) > 0 && prefix[len(prefix)-1] == '-' {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + h
}

// Hash is a short, stable, DNS-label-safe digest of s.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// NotManagedSelector is the label selector of what IsManaged is false for.
const NotManagedSelector = ManagedByLabel + "!=" + ManagedByValue + "," + EndpointSliceManagedByLabel + "!=" + EndpointSliceManagedByValue

// IsManaged reports whether an object's labels say kubectl-mcs created it.
func IsManaged(labels map[string]string) bool {
	return labels[ManagedByLabel] == ManagedByValue ||
		labels[EndpointSliceManagedByLabel] == EndpointSliceManagedByValue
}

// EndpointSliceName names the copy, made by sync, of source EndpointSlice slice from cluster for
// service. The hash of cluster/slice is always present so that two copies never share a name however
// the readable prefix is cut.
func EndpointSliceName(service, cluster, slice string) string {
	prefix := DerivedServiceName(service) + "-" + cluster
	if len(prefix) > maxLabelLen-hashLen-1 {
		prefix = prefix[:maxLabelLen-hashLen-1]
	}
	for len(prefix) > 0 && prefix[len(prefix)-1] == '-' {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + Hash(cluster+"/"+slice)
}

// IsAPIServer reports whether namespace/name is default/kubernetes, each member's own way to its
// apiserver: another member must not import it, so a selection (-l, --all) leaves it out.
func IsAPIServer(namespace, name string) bool {
	return namespace == "default" && name == "kubernetes"
}
