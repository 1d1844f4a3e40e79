package clusterset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/about"
)

// Where a member's cluster ID came from, in order of precedence.
const (
	IDFromProperty = "clusterproperty" // its cluster.clusterset.k8s.io ClusterProperty
	IDFromFlag     = "flag"            // CTX=ID in --contexts or KUBECTL_MCS_CONTEXTS
	IDFromContext  = "context"         // the context name
)

// readClusterID takes the member's ID from its cluster.clusterset.k8s.io ClusterProperty when it
// has one (the SIG-Multicluster standard). An explicit CTX=ID that disagrees is an error.
func (m *Member) readClusterID(ctx context.Context, timeout time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := about.ClusterID(rctx, m.Dynamic)
	if err != nil {
		return err
	}
	return m.AdoptID(id)
}

// AdoptID applies a property value read from the member ("" when it has none).
func (m *Member) AdoptID(id string) error {
	if id == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return &IDError{fmt.Errorf("clusterproperty/%s: %q is not a valid cluster ID: %s", about.ClusterIDProperty, id, errs[0])}
	}
	if m.IDSource == IDFromFlag && id != m.ID {
		return &IDError{fmt.Errorf("--contexts names it %q but its clusterproperty/%s says %q", m.ID, about.ClusterIDProperty, id)}
	}
	m.ID, m.IDSource = id, IDFromProperty
	return nil
}

// uniqueIDs marks a member whose property gave it another member's ID.
func uniqueIDs(members []*Member) {
	seen := map[string]string{}
	for _, m := range members {
		if other, ok := seen[m.ID]; ok && m.Err == nil {
			m.Err = &IDError{fmt.Errorf("cluster ID %q is also the ID of context %q", m.ID, other)}
			continue
		}
		seen[m.ID] = m.Context
	}
}

// IDError is a member whose cluster ID cannot be settled: a configuration error, not an outage,
// so even the commands that go on without unreachable members stop on it.
type IDError struct{ error }

func (e *IDError) Unwrap() error { return e.error }

// IDErrors returns the first member's IDError, naming the member.
func IDErrors(members []*Member) error {
	for _, m := range members {
		var ie *IDError
		if errors.As(m.Err, &ie) {
			return fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
		}
	}
	return nil
}
