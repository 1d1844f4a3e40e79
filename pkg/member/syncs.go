package member

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// syncLeaseNamespaces are where a sync's Lease is: an installed one's, and sync --leader-elect's
// default.
var syncLeaseNamespaces = []string{names.SystemNamespace, "kube-system"}

// readSyncs reads the syncs whose Lease is in m. A Lease that cannot be read (absent, or not
// ours to read) is no sync: status and diagnose say what they found, not what they could not.
func readSyncs(ctx context.Context, m *clusterset.Connection) []snapshot.Sync {
	var out []snapshot.Sync
	for _, ns := range syncLeaseNamespaces {
		l, err := m.Client.CoordinationV1().Leases(ns).Get(ctx, rbac.LeaseName, metav1.GetOptions{})
		if err != nil {
			continue
		}
		s := snapshot.Sync{Cluster: m.ID, Namespace: ns, View: snapshot.ParseSyncView(l.Annotations)}
		if h := l.Spec.HolderIdentity; h != nil {
			s.Holder = *h
		}
		if r := l.Spec.RenewTime; r != nil {
			s.Renewed = r.Time
		}
		if d := l.Spec.LeaseDurationSeconds; d != nil {
			s.LeaseDuration = time.Duration(*d) * time.Second
		}
		out = append(out, s)
	}
	return out
}
