package clusterset

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// idRule is RFC 1123's label rule in words: validation's own message carries its regex, 300
// characters that say less to a user than this.
const idRule = "at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"

// ValidID says whether id can be a cluster ID: an RFC 1123 label (KEP-2149).
func ValidID(id string) bool { return len(validation.IsDNS1123Label(id)) == 0 }

// SuggestID turns a context name that is no cluster ID ("Member1", "arn:aws:eks:...:cluster/prod")
// into one to offer with CTX=ID: lower case, every other character '-', at most 63.
func SuggestID(ctx string) string {
	b := []byte(strings.ToLower(ctx))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	id := strings.Trim(string(b), "-")
	if len(id) > validation.DNS1123LabelMaxLength {
		id = strings.TrimRight(id[:validation.DNS1123LabelMaxLength], "-")
	}
	if id == "" {
		return "ID"
	}
	return id
}

// readClusterID takes the member's ID from its cluster.clusterset.k8s.io ClusterProperty when it
// has one (the SIG-Multicluster standard). An explicit CTX=ID that disagrees is an error.
func (m *Connection) readClusterID(ctx context.Context, timeout time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := about.ClusterID(rctx, m.Dynamic)
	if err != nil {
		return err
	}
	return m.AdoptID(id)
}

// AdoptID applies a property value read from the member ("" when it has none).
func (m *Connection) AdoptID(id string) error {
	if id == "" {
		return nil
	}
	if !ValidID(id) {
		return &IDError{fmt.Errorf("clusterproperty/%s: %q is not a valid cluster ID (%s)", about.ClusterIDProperty, id, idRule)}
	}
	if m.IDSource == IDFromFlag && id != m.ID {
		return &IDError{fmt.Errorf("--contexts names it %q but its clusterproperty/%s says %q", m.ID, about.ClusterIDProperty, id)}
	}
	m.ID, m.IDSource = id, IDFromProperty
	return nil
}

// uniqueIDs marks a member whose property gave it another member's ID.
func uniqueIDs(members []*Connection) {
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
func IDErrors(members []*Connection) error {
	for _, m := range members {
		var ie *IDError
		if errors.As(m.Err, &ie) {
			return fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
		}
	}
	return nil
}
