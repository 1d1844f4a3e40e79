package clusterset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"

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
	ref, err := ReadRef(ctx, m.Dynamic, m.Ref, timeout)
	if err != nil {
		return err
	}
	m.Ref = ref
	return nil
}

// ReadRef is given (as --contexts names the member) with the ID the member's ClusterProperty
// says, read within timeout: every command reads it when it connects, and sync again whenever a
// member joins. A property that cannot be adopted is an IDError; a failed read is not.
func ReadRef(ctx context.Context, c dynamic.Interface, given Ref, timeout time.Duration) (Ref, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := about.ClusterID(rctx, c)
	if err != nil {
		return given, err
	}
	return given.WithProperty(id)
}

// AdoptID applies a property value read from the member ("" when it has none).
func (m *Connection) AdoptID(id string) error {
	ref, err := m.Ref.WithProperty(id)
	if err != nil {
		return err
	}
	m.Ref = ref
	return nil
}

// WithProperty is r with the ID its ClusterProperty says ("" when it has none: r as it is). An
// explicit CTX=ID that disagrees, or a value that is no cluster ID, is an IDError.
func (r Ref) WithProperty(id string) (Ref, error) {
	if id == "" {
		return r, nil
	}
	if !ValidID(id) {
		return r, &IDError{fmt.Errorf("clusterproperty/%s: %q is not a valid cluster ID (%s)", about.ClusterIDProperty, id, idRule)}
	}
	if r.IDSource == IDFromFlag && id != r.ID {
		return r, &IDError{fmt.Errorf("--contexts names it %q but its clusterproperty/%s says %q", r.ID, about.ClusterIDProperty, id)}
	}
	r.ID, r.IDSource = id, IDFromProperty
	return r, nil
}

// uniqueIDs marks every member whose property gave it the ID of another member, whatever their
// order and whether or not the other answered: an unreachable member keeps the ID --contexts gave
// it, and a reachable one claiming it would be taken for it.
func uniqueIDs(members []*Connection) {
	byID := map[string][]*Connection{}
	for _, m := range members {
		byID[m.ID] = append(byID[m.ID], m)
	}
	for _, m := range members {
		if m.Err != nil || m.IDSource != IDFromProperty {
			continue
		}
		for _, other := range byID[m.ID] {
			if other != m {
				m.Err = ClashError(m.ID, other.Context)
				break
			}
		}
	}
}

// ClashError is the IDError of a member whose property says the ID of the member of context
// other.
func ClashError(id, other string) error {
	return &IDError{fmt.Errorf("cluster ID %q is also the ID of context %q", id, other)}
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
