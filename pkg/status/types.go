// Package status joins what was read from every member of a clusterset (or from a Karmada control
// plane) into the rows of `kubectl mcs status`, and renders them. It is pure: no clients, no clock
// (callers pass the time), so every state a row can be in is unit-tested.
//
// The types below are the documented, versioned output schema of `kubectl mcs status -o json|yaml`
// (docs/output.md, "Status output schema"). Fields are only ever added within a version; a change
// of meaning or a removal gets a new apiVersion.
package status

import (
	"encoding/json"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// APIVersion and kinds of the output documents.
const (
	APIVersion  = "mcs.kubectl.io/v1alpha1"
	KindList    = "MultiClusterServiceStatusList"
	KindKarmada = "KarmadaServiceStatusList"
)

// Health sums a row up. Anything but Healthy is marked in the table.
type Health string

const (
	Healthy  Health = "Healthy"
	Conflict Health = "Conflict" // the exports disagree (KEP-1645 conflict); the oldest wins
	Degraded Health = "Degraded" // usable at best in part; problems say why
	Unknown  Health = "Unknown"  // Karmada: no controller has reported on it yet; else exported only outside this read
)

// ImportState is a ServiceImport's state in one cluster.
type ImportState string

const (
	ImportReady       ImportState = "Ready"       // present (ClusterSetIP: with an IP)
	ImportNoIP        ImportState = "NoIP"        // ClusterSetIP without spec.ips yet
	ImportMissing     ImportState = "Missing"     // the namespace exists, the ServiceImport does not
	ImportNoNamespace ImportState = "NoNamespace" // not imported: the namespace does not exist there
	ImportUnreachable ImportState = "Unreachable" // the cluster could not be read
	ImportNoCRDs      ImportState = "NoCRDs"      // the cluster has no mcs-api CRDs
	ImportError       ImportState = "Error"       // the cluster could not be read completely
)

// MultiClusterServiceStatusList is the document `kubectl mcs status -o json|yaml` prints.
type MultiClusterServiceStatusList struct {
	metav1.TypeMeta `json:",inline"`
	// Clusters is every member of the clusterset, in the order of --contexts.
	Clusters []ClusterInfo `json:"clusters"`
	// Syncs are the syncs running in the members read, by their Leases (Syncs).
	Syncs []SyncStatus `json:"syncs,omitempty"`
	// Items has one entry per multi-cluster service: a ServiceExport or a ServiceImport of that
	// namespace/name exists in some readable member. Sorted by namespace, name.
	Items []MultiClusterServiceStatus `json:"items"`
}

// ClusterInfo is one member and whether it could be read.
type ClusterInfo struct {
	Name          string         `json:"name"` // cluster ID
	Context       string         `json:"context"`
	State         snapshot.State `json:"state"`
	Message       string         `json:"message,omitempty"`
	MCSAPIVersion string         `json:"mcsAPIVersion,omitempty"` // served multicluster.x-k8s.io version
	// IDSource says where Name came from: clusterproperty, flag (CTX=ID) or context.
	IDSource string `json:"idSource,omitempty"`
}

// MultiClusterServiceStatus is one row.
type MultiClusterServiceStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Health    Health `json:"health"`
	// DNSName is the service's clusterset name, NAME.NS.svc.clusterset.local (or --dns-domain).
	DNSName string `json:"dnsName,omitempty"`
	// Problems says, one sentence each, why the row is not Healthy.
	Problems []string `json:"problems,omitempty"`
	// Notes says, one sentence each, what a user should know that does not make the row
	// unhealthy: a member's traffic distribution choice that has no effect there, and why; the
	// service's trafficDistribution that the copies do not carry, and why.
	Notes []string `json:"notes,omitempty"`
	// TrafficDistribution is the service's trafficDistribution (the oldest export's Service's)
	// when it asks for zone hints, and whether the EndpointSlice copies carry them: sync's own
	// decision (engine.ZoneHints); absent without one.
	TrafficDistribution *ZoneHints `json:"trafficDistribution,omitempty"`
	// Type is ClusterSetIP or Headless as decided from the oldest valid export (the type the
	// ServiceImports get); when nothing valid is exported, the ServiceImports' type.
	Type string `json:"type,omitempty"`
	// Ports are the merged ports of the valid exports (or the ServiceImports').
	Ports []Port `json:"ports"`
	// ExportingClusters are the clusters whose export is valid, plus unreachable clusters that the
	// ServiceImports or imported EndpointSlices of the others name as sources. Sorted.
	ExportingClusters []string `json:"exportingClusters"`
	// UnreadExporters are clusters outside this read (not among --contexts) that the read
	// clusters' ServiceImports or imported EndpointSlices name as sources: whether they export it
	// cannot be known from this read. Sorted.
	UnreadExporters []string `json:"unreadExporters,omitempty"`
	// ImportingClusters are the clusters holding a ServiceImport of this name. Sorted.
	ImportingClusters []string `json:"importingClusters"`
	// Endpoints counts, per exporting cluster, the endpoints of its own Service.
	Endpoints []SourceEndpoints `json:"endpoints"`
	// Conflicts between the exports, exactly as `kubectl mcs sync` resolves them.
	Conflicts []ConflictStatus `json:"conflicts"`
	// CreationTimestamp is the oldest export's (or, with no export, the oldest import's).
	CreationTimestamp metav1.Time `json:"creationTimestamp"`
	// Clusters is the per-cluster breakdown, one entry per member, in the order of --contexts.
	Clusters []ClusterStatus `json:"clusters"`
}

// Port is a service port.
type Port struct {
	Name        string `json:"name,omitempty"`
	Protocol    string `json:"protocol,omitempty"`
	Port        int32  `json:"port"`
	AppProtocol string `json:"appProtocol,omitempty"`
}

// SourceEndpoints counts endpoints from one exporting cluster. Ready counts endpoints whose
// ready condition is true or unset.
type SourceEndpoints struct {
	Cluster string `json:"cluster"`
	Ready   int    `json:"ready"`
	Total   int    `json:"total"`
	// LastKnown: the cluster could not be read; the counts are those of the copies other
	// clusters hold (the largest), or zero when there are none.
	LastKnown bool `json:"lastKnown,omitempty"`
}

// ConflictStatus is one disagreement between exports (mcs-api ServiceExport condition reasons).
type ConflictStatus struct {
	Reason      string   `json:"reason"`
	Winner      string   `json:"winner"`
	Disagreeing []string `json:"disagreeing"`
	// Losing is what each disagreeing export lost, by cluster.
	Losing []LosingExport `json:"losing"`
	// Unanswered are the ports (PORT/PROTOCOL) of losing exports the service does not carry:
	// nothing answers on them.
	Unanswered []string `json:"unanswered,omitempty"`
	Message    string   `json:"message"`
}

// LosingExport is what one disagreeing export lost: the engine's account of it.
type LosingExport = engine.LosingExport

// ClusterStatus is the service as one member sees it.
type ClusterStatus struct {
	Cluster string         `json:"cluster"`
	State   snapshot.State `json:"state"`
	// NamespaceExists is false when the cluster lacks the namespace (KEP-1645: no import there).
	NamespaceExists bool           `json:"namespaceExists"`
	Export          *ExportStatus  `json:"export,omitempty"`
	Service         *ServiceStatus `json:"service,omitempty"`
	Import          *ImportStatus  `json:"import,omitempty"`
	ImportState     ImportState    `json:"importState"`
	// Endpoints counts the endpoints of this cluster's own Service NAME (its source slices).
	Endpoints *SourceEndpoints `json:"endpoints,omitempty"`
	// ImportedEndpoints counts the EndpointSlice copies this cluster holds, by source cluster
	// (label multicluster.kubernetes.io/source-cluster).
	ImportedEndpoints []SourceEndpoints `json:"importedEndpoints,omitempty"`
	// Copies says, per source cluster, whether the EndpointSlice copies this cluster holds say
	// what the source's slices say, as sync compares them; only where sync imports the service
	// and this cluster was read. Sorted by source.
	Copies []CopiesStatus `json:"copies,omitempty"`
	// TrafficDistribution is the choice this cluster's ServiceExport records, and whether it
	// takes effect here; absent without one.
	TrafficDistribution *TrafficChoice `json:"trafficDistribution,omitempty"`
}

// CopiesState says whether a member's copies of one source cluster's slices are up to date.
type CopiesState string

const (
	// CopiesFresh: every copy is what sync would write from the source's slices now.
	CopiesFresh CopiesState = "Fresh"
	// CopiesStale: a copy differs, is missing, or stands for a source slice that is gone.
	CopiesStale CopiesState = "Stale"
	// CopiesUnread: the source cluster was not read (down, or outside --contexts): its copies
	// stand as sync last wrote them, by design, and are not compared.
	CopiesUnread CopiesState = "Unread"
)

// SinceFrom says what CopiesStatus.Since was read from: always a managedFields time.
type SinceFrom string

const (
	// SinceSourceChanged: the last change of a source slice whose copy differs or is missing
	// (later than the copy's own).
	SinceSourceChanged SinceFrom = "SourceChanged"
	// SinceCopyChanged: the last change of a copy that differs, when it is later than its source
	// slice's or that is unknown (someone else changed the copy, or what sync wants of it changed
	// otherwise).
	SinceCopyChanged SinceFrom = "CopyChanged"
	// SinceSourceGoneAfter: the last change of a copy whose source slice is gone: the source
	// changed after it.
	SinceSourceGoneAfter SinceFrom = "SourceGoneAfter"
)

// CopiesStatus is how a member's copies of one source cluster's slices compare with the copies
// sync would write now (snapshot.SliceDigest, sync's own comparison). Endpoints are named by
// their addresses, comma-joined.
type CopiesStatus struct {
	Source string      `json:"source"`
	State  CopiesState `json:"state"`
	// Slices are the copies that differ, are missing or have no source slice any more. Sorted.
	Slices []string `json:"slices,omitempty"`
	// Missing are endpoints the source holds and the copies lack; Extra the reverse.
	Missing []string `json:"missing,omitempty"`
	Extra   []string `json:"extra,omitempty"`
	// OtherState are endpoints both hold with other conditions (ready, serving, terminating),
	// hostname or zone.
	OtherState []EndpointChange `json:"otherState,omitempty"`
	// Other names what else differs: "ports", "address type", or "order" (the same endpoints,
	// ordered or grouped into slices otherwise).
	Other []string `json:"other,omitempty"`
	// Since is when the copies went stale as far as the objects tell (their managedFields
	// times; absent when they carry none), and SinceFrom what it was read from.
	Since     *metav1.Time `json:"since,omitempty"`
	SinceFrom SinceFrom    `json:"sinceFrom,omitempty"`
}

// EndpointChange is an endpoint the copies hold with other fields than its source.
type EndpointChange = snapshot.EndpointChange

// ExportStatus is a member's ServiceExport.
type ExportStatus struct {
	// Valid is false when the export is not part of the service: no Service, or ExternalName.
	Valid             bool               `json:"valid"`
	InvalidReason     string             `json:"invalidReason,omitempty"`
	CreationTimestamp metav1.Time        `json:"creationTimestamp"`
	Terminating       bool               `json:"terminating,omitempty"`
	Managed           bool               `json:"managed"` // created by kubectl mcs expose
	Conditions        []metav1.Condition `json:"conditions"`
}

// ServiceStatus is a member's own Service of the exported name.
type ServiceStatus struct {
	Type       string   `json:"type"`
	ClusterIPs []string `json:"clusterIPs,omitempty"`
}

// ImportStatus is a member's ServiceImport and derived Service.
type ImportStatus struct {
	Type    string   `json:"type"`
	IPs     []string `json:"ips,omitempty"`
	Ports   []Port   `json:"ports"`
	Sources []string `json:"sources"` // status.clusters
	// Managed: written by kubectl mcs sync; false for another controller's or a user's import.
	Managed              bool               `json:"managed"`
	DerivedService       string             `json:"derivedService,omitempty"`
	DerivedServiceIPs    []string           `json:"derivedServiceIPs,omitempty"`
	DerivedServiceExists bool               `json:"derivedServiceExists"`
	Conditions           []metav1.Condition `json:"conditions,omitempty"`
}

// DeepCopyObject makes the list a runtime.Object for kubectl's printers (jsonpath, templates).
func (l *MultiClusterServiceStatusList) DeepCopyObject() runtime.Object { return deepCopy(l) }

// SplitItems lets -o json marshal the items on every CPU (printers.Items).
func (l *MultiClusterServiceStatusList) SplitItems() (any, int, func(int) any) {
	head := *l
	head.Items = []MultiClusterServiceStatus{}
	return &head, len(l.Items), func(i int) any { return &l.Items[i] }
}

// KarmadaServiceStatusList is the document `kubectl mcs status --karmada -o json|yaml` prints.
type KarmadaServiceStatusList struct {
	metav1.TypeMeta `json:",inline"`
	// ControlPlane is the context of the Karmada control plane.
	ControlPlane         string                `json:"controlPlane"`
	MultiClusterServices []KarmadaMCSStatus    `json:"multiClusterServices"`
	ServiceExports       []KarmadaObjectStatus `json:"serviceExports"`
	ServiceImports       []KarmadaObjectStatus `json:"serviceImports"`
	// ResourceBindings are the bindings of what kubectl-mcs propagated that Karmada's scheduler
	// did not schedule (Scheduled False): the objects never reach a member.
	ResourceBindings []KarmadaBindingStatus `json:"resourceBindings"`
}

// KarmadaBindingStatus is an unscheduled ResourceBinding (work.karmada.io/v1alpha2) and
// Karmada's reason.
type KarmadaBindingStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Service is the exported Service the bound object belongs to.
	Service string `json:"service"`
	// Resource is the object bound, KIND/NAME, in APIVersion.
	Resource   string `json:"resource"`
	APIVersion string `json:"apiVersion"`
	// Scheduled, Reason and Message are its Scheduled condition's.
	Scheduled         metav1.ConditionStatus `json:"scheduled"`
	Reason            string                 `json:"reason"`
	Message           string                 `json:"message"`
	CreationTimestamp metav1.Time            `json:"creationTimestamp"`
}

// KarmadaMCSStatus is one MultiClusterService (networking.karmada.io/v1alpha1).
type KarmadaMCSStatus struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Health    Health   `json:"health"`
	Problems  []string `json:"problems,omitempty"`
	Types     []string `json:"types"`
	Ports     []Port   `json:"ports"`
	// ProviderClusters and ConsumerClusters are empty when the spec leaves them empty: all clusters.
	ProviderClusters []string `json:"providerClusters"`
	ConsumerClusters []string `json:"consumerClusters"`
	// ServiceExists: the Service of the same name exists on the control plane.
	ServiceExists     bool               `json:"serviceExists"`
	Managed           bool               `json:"managed"`
	Conditions        []metav1.Condition `json:"conditions"`
	CreationTimestamp metav1.Time        `json:"creationTimestamp"`
}

// KarmadaObjectStatus is a ServiceExport or ServiceImport on the control plane and the
// PropagationPolicies that place it.
type KarmadaObjectStatus struct {
	Namespace  string   `json:"namespace"`
	Name       string   `json:"name"`
	APIVersion string   `json:"apiVersion"`
	Health     Health   `json:"health"`
	Problems   []string `json:"problems,omitempty"`
	Type       string   `json:"type,omitempty"` // ServiceImport only
	Ports      []Port   `json:"ports,omitempty"`
	// PlacedIn are the clusters of every PropagationPolicy that selects the object. Sorted.
	PlacedIn          []string           `json:"placedIn"`
	Policies          []string           `json:"policies"`
	Managed           bool               `json:"managed"`
	Conditions        []metav1.Condition `json:"conditions,omitempty"`
	CreationTimestamp metav1.Time        `json:"creationTimestamp"`
}

// DeepCopyObject makes the list a runtime.Object for kubectl's printers.
func (l *KarmadaServiceStatusList) DeepCopyObject() runtime.Object { return deepCopy(l) }

// deepCopy copies an output document through its JSON form, which is all it is made for.
func deepCopy[T any](in *T) *T {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err) // plain data: always marshals
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}
