package member

import (
	"context"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// ReadSyncs is readSyncs for a command that waits on one sync's Lease (install --wait): the
// syncs whose Lease is in m, read as status and diagnose read them.
func ReadSyncs(ctx context.Context, m *clusterset.Connection) []snapshot.Sync {
	return readSyncs(ctx, m)
}
