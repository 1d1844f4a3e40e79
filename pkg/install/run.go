package install

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
)

// Options installs (Install) or prints (Print) what runs sync --watch in the host cluster.
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
	switch o.MemberCredentials {
	case CredentialsServiceAccount, CredentialsCurrent:
	default:
		return fmt.Errorf("--member-credentials %q: must be serviceaccount or current", o.MemberCredentials)
	}
	if o.Host == "" {
		return errors.New("no host cluster: pass --context, the cluster that runs the Deployment")
	}
	if _, ok := o.Raw.Contexts[o.Host]; !ok {
		return fmt.Errorf("--context %q: not found in kubeconfig", o.Host)
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
	o.servers, o.warnings, err = Servers(o.Host, o.serversOf(), given)
	return err
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

// Config is the generation's input.
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
		f := Count(clusters)
		req, lim := f.Memory()
		fmt.Fprintf(o.ErrOut, "Memory: request %s, limit %s, for %d members, %d cached objects (%d of them sync's own) and %d endpoints once every exported service is imported (--memory-request, --memory-limit to set them)\n",
			req.String(), lim.String(), f.Members, f.Objects, f.Records, f.Endpoints)
		return req, lim
	})
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
