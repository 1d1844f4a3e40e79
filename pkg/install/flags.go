package install

import (
	"time"

	"github.com/spf13/pflag"
)

// Member credential modes.
const (
	CredentialsServiceAccount = "serviceaccount"
	CredentialsCurrent        = "current"
)

// Install modes: where sync runs.
const (
	// ModeHost runs one sync for the whole clusterset in the --context cluster.
	ModeHost = "host"
	// ModePerMember runs in every member a sync acting for it alone (sync --local).
	ModePerMember = "per-member"
)

// Flags are what the generation takes, the same for `kubectl mcs install`, which installs it,
// and `sync --print-manifests`, which prints it.
type Flags struct {
	Mode              string
	Image             string
	MemberCredentials string
	TokenTimeout      time.Duration
	MemoryRequest     string
	MemoryLimit       string
	// MemberServers are --member-server's CTX=URL pairs, as given (ParseMemberServers).
	MemberServers []string
	// LeaseContext is --leader-elect-context ("": the host when a member, else the first).
	LeaseContext string
	// UnreachableTimeout is the deployed sync's --unreachable-timeout (0: keep the endpoints).
	UnreachableTimeout time.Duration
}

// AddFlags registers them but --leader-elect-context (AddLeaseFlag); with heads each usage
// ("With --print-manifests: " where they belong to one mode of a command).
func (f *Flags) AddFlags(fs *pflag.FlagSet, with string) {
	fs.StringVar(&f.Mode, "mode", ModeHost, with+"Where sync runs. \"host\": one Deployment in the --context cluster acts for every member, through a token of a writer ServiceAccount in each; \"per-member\": every member runs its own (sync --local), writing only there as its own ServiceAccount and reading the others as a read-only identity each of them gives it (--print-manifests then prints every member's objects, each YAML document headed by the member it goes to)")
	fs.StringVar(&f.Image, "image", DefaultImage(), with+"The container image of the Deployment")
	fs.StringVar(&f.MemberCredentials, "member-credentials", CredentialsServiceAccount, with+"\"serviceaccount\": the Deployment acts in every member as a ServiceAccount with exactly the rights sync uses (kubectl mcs install creates it, its roles and its token Secret with your context's rights); \"current\": it acts with the credentials your kubeconfig has")
	fs.DurationVar(&f.TokenTimeout, "token-timeout", time.Minute, with+"How long to wait for each member's token controller to fill the token Secret")
	fs.StringVar(&f.MemoryRequest, "memory-request", "", with+"The memory request of sync's container (e.g. 1Gi; default: sized from what the members hold, see --memory-limit)")
	fs.StringVar(&f.MemoryLimit, "memory-limit", "", with+"The memory limit of sync's container (e.g. 2Gi). Default: read from the members, 64Mi + twice (1 MiB per member, 1.6 KiB per object, 0.9 KiB per object sync made, + 0.25 KiB per endpoint of the members' own slices) what sync will hold once every exported service is imported everywhere, at least 512Mi; the request is 64Mi + once that, at least 128Mi")
	fs.StringSliceVar(&f.MemberServers, "member-server", nil, with+"CTX=URL[,CTX=URL...]: the API server address the sync pods use for member CTX, instead of its kubeconfig's server (repeatable). Default: "+InClusterServer+" for the --context cluster, whose pods reach their own apiserver by the kubernetes Service; the kubeconfig's server for the others, refused when it is a loopback or link-local address")
}

// AddSyncFlags registers --leader-elect-context and --unreachable-timeout, for a command that
// has none of its own (sync has both, and hands them on).
func (f *Flags) AddSyncFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.LeaseContext, "leader-elect-context", "", "Member context holding the Lease, one of --contexts (default: the --context cluster when it is a member, else the first of --contexts)")
	fs.DurationVar(&f.UnreachableTimeout, "unreachable-timeout", 0, "The deployed sync's --unreachable-timeout: drop an unreachable member's endpoints from the other clusters after this long (0: keep them)")
}
