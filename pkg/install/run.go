package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
)

// Options installs (Install) or prints (Print) what runs sync --watch in the host cluster, or
// with --mode=per-member in every member.
type Options struct {
	Flags
	Raw         clientcmdapi.Config
	Host        string // the --context cluster's context
	HostConfig  func() (dynamic.Interface, error)
	Members     []*clusterset.Connection
	Write       apply.Flags
	Out, ErrOut io.Writer

	// servers are the addresses the pods use, by member ID ("": the kubeconfig's); warnings are
	// about those given; both decided by Validate (Servers).
	servers  map[string]string
	warnings []string
	// absent are the namespaces found missing under --dry-run=server, by "cluster/namespace".
	absent map[string]bool
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch o.Mode {
	case ModeHost, ModePerMember:
	default:
		return fmt.Errorf("--mode %q: must be %s or %s", o.Mode, ModeHost, ModePerMember)
	}
	switch o.MemberCredentials {
	case CredentialsServiceAccount, CredentialsCurrent:
	default:
		return fmt.Errorf("--member-credentials %q: must be serviceaccount or current", o.MemberCredentials)
	}
	host := ""
	switch {
	case o.perMember() && o.MemberCredentials == CredentialsCurrent:
		return errors.New("--member-credentials=current does not go with --mode=per-member: it would copy your credentials into every member (each member's sync reads the others as a read-only identity they give it)")
	case o.perMember() && o.LeaseContext != "":
		return errors.New("--leader-elect-context does not go with --mode=per-member: each member's sync holds its Lease in its own cluster")
	case o.perMember():
	case o.Host == "":
		return errors.New("no host cluster: pass --context, the cluster that runs the Deployment")
	case o.Raw.Contexts[o.Host] == nil:
		return fmt.Errorf("--context %q: not found in kubeconfig", o.Host)
	default:
		host = o.Host
	}
	if err := CheckImage(o.Image); err != nil {
		return err
	}
	if _, err := ParseMemory(o.MemoryRequest, o.MemoryLimit, func() (resource.Quantity, resource.Quantity) { return minRequest, minLimit }); err != nil {
		return err
	}
	if _, err := o.leaseMember(); err != nil {
		return err
	}
	given, err := ParseMemberServers(o.MemberServers)
	if err != nil {
		return err
	}
	if o.servers, o.warnings, err = Servers(host, o.serversOf(), given); err != nil {
		return err
	}
	if o.perMember() {
		o.warnings = append(o.warnings, o.reachWarning())
	}
	return nil
}

func (o *Options) perMember() bool { return o.Mode == ModePerMember }

// reachWarning says what install cannot check from here: that every member's pods reach every
// other member, at the addresses they will use.
func (o *Options) reachWarning() string {
	var at []string
	for _, s := range o.serversOf() {
		addr := o.servers[s.ID]
		if addr == "" {
			addr = s.Server
		}
		at = append(at, fmt.Sprintf("%s at %s", s.ID, addr))
	}
	return "not checked from inside the pods: the pods of every member must reach every other member's apiserver (" + strings.Join(at, ", ") + ")"
}

// serversOf is every member's server as the kubeconfig names it (the client config when it was
// built, else the raw kubeconfig).
func (o *Options) serversOf() []ServerOf {
	out := make([]ServerOf, len(o.Members))
	for i, m := range o.Members {
		out[i] = ServerOf{Context: m.Context, ID: m.ID}
		if m.Config != nil {
			out[i].Server = m.Config.Host
		} else if kctx, ok := o.Raw.Contexts[m.Context]; ok && o.Raw.Clusters[kctx.Cluster] != nil {
			out[i].Server = o.Raw.Clusters[kctx.Cluster].Server
		}
	}
	return out
}

// warn prints what Validate found worth saying about the addresses.
func (o *Options) warn() {
	for _, w := range o.warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
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

// configs are the generation's inputs, one per Deployment: the host's, or per member each
// member's, acting for it (Local) with its Lease at home.
func (o *Options) configs() []Config {
	c := o.Config()
	if !o.perMember() {
		return []Config{c}
	}
	out := make([]Config, len(o.Members))
	for i, m := range o.Members {
		out[i] = c
		out[i].Local = m.ID
		out[i].Members = make([]DeployedMember, len(c.Members))
		for j, d := range c.Members {
			out[i].Members[j] = DeployedMember{ID: d.ID, Lease: d.ID == m.ID}
		}
	}
	return out
}

// Config is the generation's input in host mode.
func (o *Options) Config() Config {
	lease, _ := o.leaseMember()
	c := Config{Namespace: DefaultNamespace, Image: o.Image, UnreachableTimeout: o.UnreachableTimeout}
	for _, m := range o.Members {
		c.Members = append(c.Members, DeployedMember{ID: m.ID, Lease: m == lease})
	}
	return c
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
		f := Count(clusters, "")
		if o.perMember() { // every member's sync is sized as the one that caches most
			f = Footprint{}
			for _, c := range clusters {
				if g := Count(clusters, c.ID); g.live() > f.live() {
					f = g
				}
			}
		}
		req, lim := f.Memory()
		fmt.Fprintf(o.ErrOut, "Memory: request %s, limit %s, for %d members, %d cached objects (%d of them sync's own) and %d endpoints once every exported service is imported (--memory-request, --memory-limit to set them)\n",
			req.String(), lim.String(), f.Members, f.Objects, f.Records, f.Endpoints)
		return req, lim
	})
}

// resources maps the kinds generated here to their resources.
var resources = map[string]schema.GroupVersionResource{
	"Namespace":                        {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":                   {Version: "v1", Resource: "serviceaccounts"},
	"Secret":                           {Version: "v1", Resource: "secrets"},
	"ClusterRole":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":                             {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"Deployment":                       {Group: "apps", Version: "v1", Resource: "deployments"},
	"PodDisruptionBudget":              {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	"ValidatingAdmissionPolicy":        {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
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

// NewOptions are the options of a command whose clusterset loader has connected members: the
// host is the --context cluster (else the current context), as every kubectl command's target.
func NewOptions(flags Flags, loader *clusterset.Loader, members []*clusterset.Connection, write apply.Flags, out, errOut io.Writer) (*Options, error) {
	raw, err := loader.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, err
	}
	host := raw.CurrentContext
	if c := loader.ConfigFlags.Context; c != nil && *c != "" {
		host = *c
	}
	return &Options{
		Flags: flags, Raw: raw, Host: host, Members: members, Write: write, Out: out, ErrOut: errOut,
		HostConfig: func() (dynamic.Interface, error) {
			cfg, err := loader.RESTConfig(host)
			if err != nil {
				return nil, err
			}
			return dynamic.NewForConfig(cfg)
		},
	}, nil
}
