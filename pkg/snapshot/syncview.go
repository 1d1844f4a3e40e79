package snapshot

import (
	"encoding/json"
	"time"
)

// SyncViewAnnotation, on the Lease a leading `sync --watch --leader-elect` renews, is what that
// sync sees (SyncView, as JSON). The leader writes it with each renewal, so it costs no write of
// its own, and a view as old as the renewal tells a sync that stopped.
const SyncViewAnnotation = "mcs.kubectl.io/sync-view"

// SyncView is what a running sync publishes of itself.
type SyncView struct {
	// Local is the member it acts for (sync --local); "" is the whole clusterset.
	Local   string             `json:"local,omitempty"`
	Members []SyncViewedMember `json:"members"`
	// FailingWrites counts the objects whose last write failed; Failing names a few of them.
	FailingWrites int      `json:"failingWrites"`
	Failing       []string `json:"failing,omitempty"`
	// Synced: its caches have synced and it decides. LastSync is when it last finished deciding a
	// service (zero: not yet).
	Synced   bool      `json:"synced"`
	LastSync time.Time `json:"lastSync,omitzero"`
}

// SyncViewedMember is one member as a running sync reaches it.
type SyncViewedMember struct {
	Cluster string `json:"cluster"`
	State   State  `json:"state"` // Reachable, Unreachable, or Joining (never read yet)
	Message string `json:"message,omitempty"`
}

// Joining is a member a sync has not read yet (down since it started, or its caches syncing).
const Joining State = "Joining"

// Sync is an installed sync as one member's Lease tells it.
type Sync struct {
	Cluster, Namespace string // where its Lease is
	Holder             string // the leading pod ("" when nobody holds the Lease)
	Renewed            time.Time
	LeaseDuration      time.Duration
	View               *SyncView // nil: the leader published none (an older version), or it did not parse
}

// Stale says whether the leader has not renewed the Lease for twice its duration: nobody leads,
// or the sync is stopped.
func (s Sync) Stale(now time.Time) bool {
	return s.Holder == "" || now.Sub(s.Renewed) > 2*s.LeaseDuration
}

// ParseSyncView reads the annotation; nil when absent or unreadable.
func ParseSyncView(annotations map[string]string) *SyncView {
	raw, ok := annotations[SyncViewAnnotation]
	if !ok {
		return nil
	}
	var v SyncView
	if json.Unmarshal([]byte(raw), &v) != nil {
		return nil
	}
	return &v
}
