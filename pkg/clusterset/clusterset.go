// Package clusterset turns kubeconfig contexts into the members of a clusterset: parsing of
// --contexts / KUBECTL_MCS_CONTEXTS, cluster ID validation, and one set of clients per member.
package clusterset

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EnvContexts is read when --contexts is not given.
const EnvContexts = "KUBECTL_MCS_CONTEXTS"

// Ref names one member: the kubeconfig context and the cluster ID it is known by, and where that
// ID came from (IDFrom*).
type Ref struct {
	Context  string
	ID       string
	IDSource string
}

// Connection is a reachable-or-not member cluster with its clients. Err is set when the member could
// not be configured or reached; the other fields are then only partly filled.
type Connection struct {
	Ref
	// Given is the member as --contexts names it, before its ClusterProperty was read (zero:
	// Ref is as given).
	Given     Ref
	Config    *rest.Config
	Client    kubernetes.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Err       error
}

// GivenRef is the member as --contexts names it, before its ClusterProperty was read.
func (m *Connection) GivenRef() Ref {
	if m.Given.Context == "" {
		return m.Ref
	}
	return m.Given
}

// Flags is the clusterset flag shared by every command that spans clusters.
type Flags struct {
	Contexts string
}

// AddFlags registers --contexts.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Contexts, "contexts", "", "Comma-separated kubeconfig contexts forming the clusterset, each optionally CTX=ID to set its cluster ID (default: $"+EnvContexts+"; without either, --context alone is a clusterset of one)")
}

// ParseContexts parses "CTX[=ID],..." into refs. A missing ID is the context name, which must
// then be a valid cluster ID itself.
func ParseContexts(s string) ([]Ref, error) {
	var refs []Ref
	seenCtx, seenID := map[string]bool{}, map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ctx, id, hasID := strings.Cut(part, "=")
		ctx, id = strings.TrimSpace(ctx), strings.TrimSpace(id)
		if ctx == "" {
			return nil, fmt.Errorf("--contexts: %q has no context name", part)
		}
		source := IDFromFlag
		if !hasID {
			id, source = ctx, IDFromContext
		}
		if !ValidID(id) {
			if hasID {
				return nil, fmt.Errorf("context %q: cluster ID %q is not a valid RFC 1123 label (%s)", ctx, id, idRule)
			}
			return nil, fmt.Errorf("context %q is not a valid cluster ID (RFC 1123 label); give one with --contexts %s=%s", ctx, ctx, SuggestID(ctx))
		}
		if seenCtx[ctx] {
			return nil, fmt.Errorf("--contexts: context %q is listed twice", ctx)
		}
		if other, ok := seenID[id]; ok {
			return nil, fmt.Errorf("--contexts: contexts %q and %q both have cluster ID %q", other, ctx, id)
		}
		seenCtx[ctx], seenID[id] = true, ctx
		refs = append(refs, Ref{Context: ctx, ID: id, IDSource: source})
	}
	return refs, nil
}

// The client-side rate limit of each member's clients unless the command sets its own (sync's
// --kube-api-qps and --kube-api-burst).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Loader resolves the clusterset from flags, environment and kubeconfig.
type Loader struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Flags       *Flags
	// Timeout bounds the reachability probe of each member (default 10s, or --request-timeout).
	Timeout time.Duration
	// QPS and Burst limit each member's clients (0: DefaultQPS, DefaultBurst).
	QPS   float32
	Burst int
	// KeepIDs leaves the IDs of --contexts (or the context names) as they are, ClusterProperty
	// and clashes unread: for diagnose, which checks them itself.
	KeepIDs bool
}

// Refs returns the clusterset's members. forWrite commands never fall back to "every context":
// they ask the user to name the clusters.
//
// --context alone (no --contexts, no $KUBECTL_MCS_CONTEXTS) is a clusterset of that one
// cluster, as kubectl reads --context: the cluster to act on.
func (l *Loader) Refs(forWrite bool) ([]Ref, error) {
	raw, err := RawConfig(l.ConfigFlags)
	if err != nil {
		return nil, err
	}
	spec := l.Flags.Contexts
	if spec == "" {
		spec = os.Getenv(EnvContexts)
	}
	if spec == "" {
		spec = flagContext(l.ConfigFlags)
	}
	var refs []Ref
	if spec != "" {
		// A context missing from the kubeconfig is said as such, before its name is judged as an ID.
		for _, part := range strings.Split(spec, ",") {
			ctx, _, _ := strings.Cut(part, "=")
			ctx = strings.TrimSpace(ctx)
			if _, ok := raw.Contexts[ctx]; !ok && ctx != "" {
				return nil, notFound(ctx)
			}
		}
		if refs, err = ParseContexts(spec); err != nil {
			return nil, err
		}
	} else {
		if forWrite {
			return nil, fmt.Errorf("no clusterset named: this command writes to clusters and will not guess them; pass --contexts=CTX1,CTX2 or set %s", EnvContexts)
		}
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		if refs, err = ParseContexts(strings.Join(names, ",")); err != nil {
			return nil, fmt.Errorf("%w (all kubeconfig contexts are used when --contexts is not given)", err)
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("the clusterset is empty: pass --contexts=CTX1,CTX2 or set %s", EnvContexts)
	}
	return refs, nil
}

// RESTConfig builds the client config of one context, keeping every other kubectl flag
// (--kubeconfig, --request-timeout, --user, ...) in force.
func (l *Loader) RESTConfig(ctx string) (*rest.Config, error) {
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	if k := l.ConfigFlags.KubeConfig; k != nil && *k != "" {
		loading.ExplicitPath = *k
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: ctx}
	if t := l.ConfigFlags.Timeout; t != nil && *t != "" && *t != "0" {
		overrides.Timeout = *t
	}
	if u := l.ConfigFlags.Impersonate; u != nil {
		overrides.AuthInfo = clientcmdapi.AuthInfo{Impersonate: *u}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, overrides).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	if l.QPS > 0 {
		cfg.QPS = l.QPS
	}
	if l.Burst > 0 {
		cfg.Burst = l.Burst
	}
	cfg.UserAgent = "kubectl-mcs"
	return cfg, nil
}

// Connect builds clients for every ref and probes each member concurrently. It never fails as a
// whole: a member that cannot be reached carries Err, so callers can report it by name and go on
// with the rest.
func (l *Loader) Connect(ctx context.Context, refs []Ref) []*Connection {
	members := make([]*Connection, len(refs))
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			members[i] = l.connect(ctx, r)
		}()
	}
	wg.Wait()
	if !l.KeepIDs {
		uniqueIDs(members)
	}
	return members
}

func (l *Loader) connect(ctx context.Context, r Ref) *Connection {
	m := &Connection{Ref: r, Given: r}
	cfg, err := l.RESTConfig(r.Context)
	if err != nil {
		m.Err = err
		return m
	}
	m.Config = cfg
	if m.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		m.Err = err
		return m
	}
	if m.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		m.Err = err
		return m
	}
	m.Discovery = m.Client.Discovery()
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if err := Probe(ctx, m.Discovery, timeout); err != nil {
		m.Err = fmt.Errorf("unreachable: %w", err)
		return m
	}
	if !l.KeepIDs {
		m.Err = m.readClusterID(ctx, timeout)
	}
	return m
}

// Probe asks a member's apiserver whether it is ready, within timeout: the one reachability check
// of every command (/readyz is open to every user, as /version is).
func Probe(ctx context.Context, d discovery.DiscoveryInterface, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return d.RESTClient().Get().AbsPath("/readyz").Do(pctx).Error()
}

// FirstError returns an error naming the first unreachable member, for commands that need all.
func FirstError(members []*Connection) error {
	for _, m := range members {
		if m.Err != nil {
			return fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
		}
	}
	return nil
}
