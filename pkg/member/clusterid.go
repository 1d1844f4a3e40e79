package member

import (
	"context"
	"errors"
	"slices"
	"sync"

	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// A member's cluster ID is read whenever it joins, not only when the command connected: one that
// did not answer then, or whose ClusterProperty could not be read, is known by the ID --contexts
// gave it (its context name, often) until it joins, and its copies in the other members carry the
// ID its property says.

// clusterIDs are the members of one New, so that a member joining with an ID another one has is
// refused, whichever joined first.
type clusterIDs struct {
	mu      sync.Mutex // held while a member checks and takes an ID
	members []*Cache
}

// ID is the member's cluster ID: the one it joined with, or, until it joins, the one it was
// connected with.
func (m *Cache) ID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ref.ID
}

// IDSource is where ID came from (clusterset.IDFrom*).
func (m *Cache) IDSource() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ref.IDSource
}

// FormerIDs are the IDs the member was known by and is no longer: the one --contexts gave it,
// and the one it had before it joined. What the clusterset recorded under them is its own.
func (m *Cache) FormerIDs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, id := range []string{m.GivenRef().ID, m.Connection.ID} {
		if id != m.ref.ID && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// settleID reads the member's ClusterProperty as it joins and takes the ID it says (or the one
// --contexts gave, when it has none). An ID another member has or may have is a
// clusterset.IDError: a member whose ID is not known yet (its property unread) is taken to have
// the one it was given, since copies recorded under that ID may be its own. A clash is decided
// on IDs read, so members whose properties swap their context names (or go round in a cycle)
// each wait only until the other's is read, not for the other to join.
func (m *Cache) settleID(ctx context.Context) error {
	if m.cfg.GivenID {
		return nil
	}
	ref, err := clusterset.ReadRef(ctx, m.Dynamic, m.GivenRef(), probeTimeout)
	if err != nil {
		return err
	}
	m.ids.mu.Lock()
	defer m.ids.mu.Unlock()
	m.mu.Lock()
	m.known = ref.ID
	m.mu.Unlock()
	for _, o := range m.ids.members {
		if o != m && o.knownID() == ref.ID {
			return clusterset.ClashError(ref.ID, o.Context)
		}
	}
	m.mu.Lock()
	was := m.ref.ID
	m.ref = ref
	m.mu.Unlock()
	if was != ref.ID {
		klog.InfoS("member joins under the cluster ID its ClusterProperty says", "context", m.Context, "was", was, "cluster", ref.ID)
	}
	return nil
}

// knownID is the ID the member has or will have, as far as was read: the one its property said
// at its last read, else the one it was connected with.
func (m *Cache) knownID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known != "" {
		return m.known
	}
	return m.ref.ID
}

// idError says whether err is a cluster ID that cannot be settled: a configuration error,
// said loudly, not an outage.
func idError(err error) bool {
	var ie *clusterset.IDError
	return errors.As(err, &ie)
}
