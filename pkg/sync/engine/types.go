package engine

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// Observed is the state of every member cluster as the informer caches see it.
type Observed struct {
	// Now stamps new condition transitions; the engine never reads the clock.
	Now      metav1.Time
	Clusters []ClusterState
	// FieldManager is the server-side apply manager the writer uses (default names.FieldManager).
	// Plan reads managedFields with it to notice labels/annotations we set earlier and must drop.
	FieldManager string
}

// ClusterState is one member cluster. IDs must be unique within an Observed.
type ClusterState struct {
	ID string
	// Reachable false means the cache holds last-known objects: they still act as sources, but
	// nothing is desired in or written to the cluster and it does not count for Ready.
	Reachable  bool
	Namespaces []string

	ServiceExports []*mcsv1beta1.ServiceExport
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	ServiceImports []*mcsv1beta1.ServiceImport
}

// Desired is what every reachable cluster should hold.
type Desired struct {
	// Clusters has an entry, possibly empty, for every reachable cluster and no other.
	Clusters map[string]*ClusterDesired
	// Conflicts is sorted by namespace, service, reason.
	Conflicts []Conflict
}

// ClusterDesired is the desired state of one reachable cluster. Slices are sorted by namespace/name.
type ClusterDesired struct {
	ServiceImports []*mcsv1beta1.ServiceImport
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	// ExportConditions holds the complete set of conditions the engine owns (Valid, Ready,
	// Conflict) for every ServiceExport of this cluster, LastTransitionTime already resolved.
	ExportConditions map[types.NamespacedName][]metav1.Condition
	Skipped          []Skip
}

// Conflict is one disagreement between the constituents of an exported service.
type Conflict struct {
	Namespace, Service string
	Reason             string // an mcs-api ServiceExportReason*Conflict value
	Winner             string // cluster of the oldest constituent export
	Disagreeing        []string
	Total              int // number of constituents
	Message            string
}

// Skip is an object the engine would have written but did not because someone else owns it.
type Skip struct {
	Kind, Namespace, Name string
	Message               string
}

// Action kinds and verbs.
const (
	KindServiceImport       = "ServiceImport"
	KindService             = "Service"
	KindEndpointSlice       = "EndpointSlice"
	KindServiceExportStatus = "ServiceExportStatus"

	VerbCreate = "create"
	VerbUpdate = "update"
	VerbDelete = "delete"
	VerbStatus = "status"
)

// Action is one write. Object is the full desired object (nil for delete); for VerbStatus it is
// the object whose status subresource to write (ServiceImport or ServiceExport).
type Action struct {
	Cluster   string
	Kind      string
	Namespace string
	Name      string
	Verb      string
	Object    runtime.Object
}
