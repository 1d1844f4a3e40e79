package status

// The syncs that run in the clusterset, as their Leases tell them: where each runs, who leads,
// when it last renewed, and what it reports of itself (snapshot.SyncView).

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// SyncStatus is one sync, by its Lease.
type SyncStatus struct {
	Cluster   string `json:"cluster"` // the member holding its Lease
	Namespace string `json:"namespace"`
	// Leader is the pod that holds the Lease ("" when none does).
	Leader  string      `json:"leader,omitempty"`
	Renewed metav1.Time `json:"renewed"`
	// Stale: not renewed for twice the Lease's duration; the sync is not running.
	Stale bool `json:"stale"`
	// Local is the member it acts for (sync --local); "" is the whole clusterset.
	Local string `json:"local,omitempty"`
	// Unreachable are the members it cannot read, with why.
	Unreachable   []snapshot.SyncViewedMember `json:"unreachable,omitempty"`
	FailingWrites int                         `json:"failingWrites"`
	Failing       []string                    `json:"failing,omitempty"`
	// Reported: the leader publishes its view (false for a sync that does not).
	Reported bool `json:"reported"`
}

// Syncs are the syncs found in the members read, in the members' order.
func Syncs(clusters []snapshot.Cluster, now time.Time) []SyncStatus {
	var out []SyncStatus
	for _, c := range clusters {
		for _, s := range c.Syncs {
			st := SyncStatus{Cluster: s.Cluster, Namespace: s.Namespace, Renewed: metav1.NewTime(s.Renewed), Stale: s.Stale(now)}
			st.Leader, _, _ = strings.Cut(s.Holder, "_")
			if v := s.View; v != nil {
				st.Reported, st.Local, st.FailingWrites, st.Failing = true, v.Local, v.FailingWrites, v.Failing
				for _, m := range v.Members {
					if m.State != snapshot.Reachable {
						st.Unreachable = append(st.Unreachable, m)
					}
				}
			}
			out = append(out, st)
		}
	}
	return out
}

// SyncLines are what the text output says of the syncs: one line each, then a warning for every
// member one cannot reach, for its failing writes, and for one that stopped.
func SyncLines(syncs []SyncStatus, now time.Time) (lines, warnings []string) {
	for _, s := range syncs {
		scope := "the clusterset"
		if s.Local != "" {
			scope = fmt.Sprintf("%q alone", s.Local)
		}
		leader := "nobody leads"
		if s.Leader != "" {
			leader = s.Leader + " leads"
		}
		ago := now.Sub(s.Renewed.Time).Round(time.Second)
		lines = append(lines, fmt.Sprintf("Sync in %q (%s): %s, renewed %s ago, for %s", s.Cluster, s.Namespace, leader, ago, scope))
		where := fmt.Sprintf("the sync in %q", s.Cluster)
		if s.Stale {
			warnings = append(warnings, fmt.Sprintf("%s has not renewed its Lease for %s: it is not running, and the imports it keeps do not change", where, ago))
			continue
		}
		for _, m := range s.Unreachable {
			warnings = append(warnings, fmt.Sprintf("%s cannot read cluster %q (%s): %s", where, m.Cluster, strings.ToLower(string(m.State)), m.Message))
		}
		if s.FailingWrites > 0 {
			warnings = append(warnings, fmt.Sprintf("%s has %d writes failing: %s", where, s.FailingWrites, strings.Join(s.Failing, "; ")))
		}
	}
	return lines, warnings
}
