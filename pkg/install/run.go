package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Member credential modes.
const (
	CredentialsServiceAccount = "serviceaccount"
	CredentialsCurrent        = "current"
)

// Flags are sync's flags for --print-manifests.
type Flags struct {
	PrintManifests    bool
	Image             string
	MemberCredentials string
	Apply             bool
	TokenTimeout      time.Duration
	MemoryRequest     string
	MemoryLimit       string
}

// AddFlags registers them.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.PrintManifests, "print-manifests", false, "Print what runs sync --watch as a Deployment in the --context cluster (two replicas under leader election, a kubeconfig Secret with one kubeconfig per member), after giving every member a ServiceAccount with exactly the rights sync uses (see --member-credentials)")
	fs.StringVar(&f.Image, "image", DefaultImage(), "With --print-manifests: the container image of the Deployment")
	fs.StringVar(&f.MemberCredentials, "member-credentials", CredentialsServiceAccount, "With --print-manifests: \"serviceaccount\" creates in every member (with your context's rights) a ServiceAccount, its roles and a token, and embeds the tokens; \"current\" embeds the credentials your kubeconfig has")
	fs.BoolVar(&f.Apply, "apply", false, "With --print-manifests: apply the host's objects to the --context cluster instead of printing them")
	fs.DurationVar(&f.TokenTimeout, "token-timeout", time.Minute, "With --print-manifests: how long to wait for each member's token controller to fill the token Secret")
	fs.StringVar(&f.MemoryRequest, "memory-request", "", "With --print-manifests: the memory request of sync's container (e.g. 1Gi; default: sized from what the members hold, see --memory-limit)")
	fs.StringVar(&f.MemoryLimit, "memory-limit", "", "With --print-manifests: the memory limit of sync's container (e.g. 2Gi). Default: read from the members, 64Mi + twice (1.6 KiB per object + 0.3 KiB per endpoint) that sync's caches will hold once every exported service is imported everywhere, at least 512Mi; the request is 64Mi + once that, at least 128Mi")
}

// Options runs --print-manifests.
type Options struct {
	Flags
	Raw          clientcmdapi.Config
	Host         string // the --context cluster's context
	HostConfig   func() (dynamic.Interface, error)
	Members      []*clusterset.Connection
	LeaseContext string // --leader-elect-context ("" : the host when a member, else the first)
	Write        apply.Flags
	Out, ErrOut  io.Writer
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch o.MemberCredentials {
	case CredentialsServiceAccount, CredentialsCurrent:
	default:
		return fmt.Errorf("--member-credentials %q: must be serviceaccount or current", o.MemberCredentials)
	}
	switch o.Write.Print.Format {
	case "", "yaml", "json":
	default:
		return fmt.Errorf("--output %q: --print-manifests prints yaml or json", o.Write.Print.Format)
	}
	if o.Host == "" {
		return errors.New("--print-manifests: no host cluster: pass --context, the cluster that runs the Deployment")
	}
	if _, ok := o.Raw.Contexts[o.Host]; !ok {
		return fmt.Errorf("--context %q: not found in kubeconfig", o.Host)
	}
	if o.Image == "" {
		return errors.New("--image must not be empty")
	}
	if _, err := ParseMemory(o.MemoryRequest, o.MemoryLimit, func() (resource.Quantity, resource.Quantity) { return minRequest, minLimit }); err != nil {
		return err
	}
	_, err := o.leaseMember()
	return err
}

// leaseMember is the member holding the Lease: --leader-elect-context, else the host cluster
// when it is a member (the Lease lives where the replicas run), else the first member.
func (o *Options) leaseMember() (*clusterset.Connection, error) {
	want := o.LeaseContext
	if want == "" {
		want = o.Members[0].Context
		for _, m := range o.Members {
			if m.Context == o.Host {
				want = m.Context
			}
		}
	}
	for _, m := range o.Members {
		if m.Context == want {
			return m, nil
		}
	}
	return nil, fmt.Errorf("--leader-elect-context %q is not one of --contexts", want)
}

// Config is the generation's input.
func (o *Options) Config() Config {
	lease, _ := o.leaseMember()
	c := Config{Namespace: DefaultNamespace, Image: o.Image}
	for _, m := range o.Members {
		c.Members = append(c.Members, DeployedMember{ID: m.ID, Lease: m == lease})
	}
	return c
}

// Run gives the members their credentials, then prints (or applies) the host's objects.
func (o *Options) Run(ctx context.Context) error {
	cfg := o.Config()
	var err error
	if cfg.Memory, err = o.memory(ctx); err != nil {
		return err
	}
	kubeconfigs := map[string][]byte{}
	if o.MemberCredentials == CredentialsServiceAccount {
		kubeconfigs, err = o.serviceAccounts(ctx, cfg)
	} else {
		kubeconfigs, err = o.currentCredentials()
	}
	if err != nil {
		return err
	}
	dyn, err := o.HostConfig()
	if err != nil {
		return fmt.Errorf("cluster %q (--context): %w", o.Host, err)
	}
	items, err := itemsOf(o.Host, dyn, HostObjects(cfg, kubeconfigs))
	if err != nil {
		return err
	}
	w := o.Write
	if w.Print.Format == "" {
		w.Print.Format = "yaml"
	}
	if !o.Apply && w.DryRun != cmdutil.DryRunServer {
		w.DryRun = cmdutil.DryRunClient // printing only
	}
	if w.DryRun != cmdutil.DryRunClient {
		if err := apply.CheckOwnership(ctx, items); err != nil {
			return err
		}
	}
	if o.Apply && o.Write.Print.Format == "" {
		w.Print.Format = ""
	}
	return w.Apply(ctx, o.Out, items)
}

// memory sizes sync's container: the flags, else the rule (Count, Footprint.Memory) over what
// every member holds now, read as status reads it.
func (o *Options) memory(ctx context.Context) (Resources, error) {
	return ParseMemory(o.MemoryRequest, o.MemoryLimit, func() (resource.Quantity, resource.Quantity) {
		clusters := member.Read(ctx, o.Members, "", "", member.DefaultChunkSize)
		for _, c := range clusters {
			if !c.HasData() {
				fmt.Fprintf(o.ErrOut, "Warning: cluster %q: not counted in the memory sizing: %s\n", c.ID, c.Message)
			}
		}
		f := Count(clusters)
		req, lim := f.Memory()
		fmt.Fprintf(o.ErrOut, "Memory: request %s, limit %s, for %d cached objects and %d endpoints once every exported service is imported (--memory-request, --memory-limit to set them)\n",
			req.String(), lim.String(), f.Objects, f.Endpoints)
		return req, lim
	})
}

// serviceAccounts applies every member's objects (ownership checked everywhere first), then waits
// for the token controller to fill each token Secret and builds the kubeconfigs from them.
func (o *Options) serviceAccounts(ctx context.Context, cfg Config) (map[string][]byte, error) {
	var all []apply.Item
	for i, m := range o.Members {
		if m.Err != nil {
			return nil, fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
		}
		items, err := itemsOf(m.ID, m.Dynamic, MemberObjects(cfg.Namespace, cfg.Members[i], rbac.SyncRules))
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
	}
	if o.Write.DryRun != cmdutil.DryRunClient {
		if err := apply.CheckOwnership(ctx, all); err != nil {
			return nil, err
		}
	}
	w := o.Write
	w.Print.Format = "" // progress lines on stderr; stdout holds the manifests
	if err := w.Apply(ctx, o.ErrOut, all); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	if o.Write.DryRun != cmdutil.DryRunNone {
		fmt.Fprintln(o.ErrOut, "Warning: dry run: no ServiceAccount token exists yet; the kubeconfigs carry none")
	}
	for _, m := range o.Members {
		var token string
		var ca []byte
		if o.Write.DryRun == cmdutil.DryRunNone {
			var err error
			if token, ca, err = o.waitToken(ctx, m, cfg.Namespace); err != nil {
				return nil, err
			}
		}
		kc, err := TokenKubeconfig(m.ID, m.Config, ca, token)
		if err != nil {
			return nil, err
		}
		out[m.ID] = kc
	}
	return out, nil
}

func (o *Options) waitToken(ctx context.Context, m *clusterset.Connection, namespace string) (string, []byte, error) {
	var token string
	var ca []byte
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.TokenTimeout, true, func(ctx context.Context) (bool, error) {
		s, err := m.Client.CoreV1().Secrets(namespace).Get(ctx, TokenSecret, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token, ca = string(s.Data["token"]), s.Data["ca.crt"]
		return token != "", nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("cluster %q: secret %s/%s: no token after %s (is the token controller of kube-controller-manager running?): %w",
			m.ID, namespace, TokenSecret, o.TokenTimeout, err)
	}
	return token, ca, nil
}

// currentCredentials embeds the user's own credentials, saying so.
func (o *Options) currentCredentials() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range o.Members {
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q: embedding the credentials of context %q in secret %s/%s; the Deployment acts with all their rights (--member-credentials=serviceaccount grants only what sync uses)\n",
			m.ID, m.Context, DefaultNamespace, KubeconfigSecret)
		if why := Portable(o.Raw, m.Context); why != "" {
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q: context %q will not work in a pod: %s\n", m.ID, m.Context, why)
		}
		kc, err := CurrentKubeconfig(o.Raw, m.Context, m.ID)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: %w", m.ID, err)
		}
		out[m.ID] = kc
	}
	return out, nil
}

// resources maps the kinds generated here to their resources.
var resources = map[string]schema.GroupVersionResource{
	"Namespace":           {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":      {Version: "v1", Resource: "serviceaccounts"},
	"Secret":              {Version: "v1", Resource: "secrets"},
	"ClusterRole":         {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding":  {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":                {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":         {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"Deployment":          {Group: "apps", Version: "v1", Resource: "deployments"},
	"PodDisruptionBudget": {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
}

func itemsOf(cluster string, dyn dynamic.Interface, objs []runtime.Object) ([]apply.Item, error) {
	us, err := Unstructured(objs)
	if err != nil {
		return nil, err
	}
	items := make([]apply.Item, len(us))
	for i, u := range us {
		gvr, ok := resources[u.GetKind()]
		if !ok {
			return nil, fmt.Errorf("no resource known for kind %s", u.GetKind())
		}
		items[i] = apply.Item{Cluster: cluster, Client: dyn, GVR: gvr, Object: u}
	}
	return items, nil
}
