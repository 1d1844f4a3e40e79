package engine

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Observed is the state of every member cluster as the informer caches see it.
type Observed struct {
	// Now stamps new condition transitions; the engine never reads the clock.
	Now      metav1.Time
	Clusters []ObservedCluster
	// FieldManager is the server-side apply manager the writer uses (default names.FieldManager).
	// Plan reads managedFields with it to notice labels/annotations we set earlier and must drop.
	FieldManager string

	// Membership. Clusters are the members whose caches were read (reachable now or not). A
	// source cluster that is neither among them nor Evicted is unread (down since start, not
	// synced yet, or outside --contexts): what the clusterset recorded about it (ServiceImport
	// status.clusters, slice source-cluster labels) stands, and nothing of it is deleted.
	// Evicted are members read before and unreachable past --unreachable-timeout: their records
	// no longer stand. Members lists every cluster ID of the clusterset, read or not; a recorded
	// source outside it is reported as such (nil: no such report).
	Evicted []string
	Members []string
	// Services, when set, are the only services this observation decides: objects of other
	// services that it happens to hold (a Service named derived-X belongs to X) are never
	// touched. Nil decides every service found.
	Services []types.NamespacedName
	// Failing are writes that keep failing (the caller decides what "keep" means): the
	// constituent exports of their service say so in Ready (False, Failed), naming each object and
	// the apiserver's answer. Nothing else changes: a refused write is no reason to take anything
	// away elsewhere.
	Failing []WriteFailure
	// For, when set, is the one cluster whose desired state Compute builds: the others' is left
	// out (Plan writes nothing there), and For's is what it would be without For. A cluster
	// working through its own writes asks for its own alone; building every cluster's imports and
	// copies for it would cost members times as much.
	For string
}

// WriteFailure is a write of one object that the apiserver keeps refusing.
type WriteFailure struct {
	Service                        types.NamespacedName // the service whose decision planned it
	Cluster, Kind, Namespace, Name string
	Message                        string // the apiserver's answer
}

// Pruner is what a member's served CRD schema declares (crdschema.Schema): Prune removes from an
// object's content every field the schema does not hold. A nil Pruner holds everything.
type Pruner interface {
	Prune(obj map[string]any) []string
}

// ObservedCluster is one member cluster. IDs must be unique within an Observed.
type ObservedCluster struct {
	ID string
	// UID is the cluster's own identity, whatever its ID: its kube-system namespace's UID, as
	// KEP-2149 recommends for a cluster ID ("" unknown). The imports record it for every cluster
	// they name, so that records under a member's former ID are known for its own (FormerIDs).
	UID string
	// Reachable false means the cache holds last-known objects: they still act as sources, but
	// nothing is desired in or written to the cluster and it does not count for Ready.
	Reachable bool
	// Objects are what was read; Namespaces are those that can hold imports (not terminating).
	snapshot.Objects

	// ImportSchema and ExportSchema are the member's served ServiceImport and ServiceExport
	// schemas: only what they declare is written there, and compared.
	ImportSchema, ExportSchema Pruner
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
	// Held are managed objects kept as they are because they stand for an unread source cluster.
	Held []Held
}

// Held is an object that stands for a source cluster that was not read.
type Held struct {
	Kind, Namespace, Name string
	Source                string // the unread source cluster
	Outside               bool   // Source is not a member of the clusterset at all, nor a member's former ID
}

// Conflict is one disagreement between the constituents of an exported service.
type Conflict struct {
	Namespace   string   `json:"namespace"`
	Service     string   `json:"service"`
	Reason      string   `json:"reason"` // an mcs-api ServiceExportReason*Conflict value
	Winner      string   `json:"winner"` // cluster of the oldest constituent export
	Disagreeing []string `json:"disagreeing"`
	Total       int      `json:"total"` // number of constituents
	// Losing is, for each disagreeing export (by cluster, sorted), what it asked for and the
	// service does not have.
	Losing []LosingExport `json:"losing"`
	// Unanswered are the ports (PORT/PROTOCOL) of losing exports that the service does not carry
	// at all: consumers get no answer on them (PortConflict only).
	Unanswered []string `json:"unanswered,omitempty"`
	Message    string   `json:"message"`
}

// LosingExport is what one disagreeing export lost.
type LosingExport struct {
	Cluster string `json:"cluster"`
	// Value is its own value, which is not used ("" for a PortConflict when none of its ports is
	// left out, only some of the service's missing from it).
	Value string `json:"value,omitempty"`
	// Unserved are the service's ports its endpoints get no traffic on (PortConflict only): it does
	// not export them as the service carries them.
	Unserved string `json:"unserved,omitempty"`
}

// Skip is an object the engine would have written but did not because someone else owns it.
type Skip struct {
	Kind, Namespace, Name string
	Message               string
}

// Action verbs (an Action's Kind is one of snapshot's kinds).
const (
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
