package snapshot

// State says whether a member could be read. Its values are part of status's versioned output.
type State string

const (
	// Reachable: every resource was read.
	Reachable State = "Reachable"
	// Unreachable: the apiserver did not answer (from caches: the objects are the last ones
	// seen).
	Unreachable State = "Unreachable"
	// NoCRDs: the cluster serves neither v1beta1 nor v1alpha1 of multicluster.x-k8s.io.
	NoCRDs State = "NoCRDs"
	// Error: the apiserver answered but a list failed (e.g. forbidden); see the message.
	Error State = "Error"
)

// Cluster is one member as read, by a one-shot list (member.Read) or from its caches
// (member.Cache.View): how it was read, and its objects.
type Cluster struct {
	ID, Context   string
	State         State
	Message       string
	MCSAPIVersion string
	// IDSource is where the ID came from (clusterset.Ref.IDSource).
	IDSource string
	// LastKnown: State is not Reachable but the objects are the last ones seen (caches are
	// kept); they take part, flagged as last known.
	LastKnown bool
	// NamespacesUnknown: the namespaces could not be listed.
	NamespacesUnknown bool
	// Syncs are the syncs whose Lease is in this member (installed ones, and any run with
	// --leader-elect), as their Leases tell them.
	Syncs []Sync
	Objects
}

// HasData says whether the cluster's objects take part.
func (c *Cluster) HasData() bool { return c.State == Reachable || c.LastKnown }
