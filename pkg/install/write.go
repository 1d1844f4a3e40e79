package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Install gives every member what the credentials need (ServiceAccount, roles, token Secret,
// per member the readers' identities; the admission policy where served; nothing with
// --member-credentials=current), waits for the tokens, then applies what runs sync: in the host,
// or per member in each. Ownership is checked in every cluster before the first write; each
// object written is a line on Out (kubectl's), or with -o yaml|json one document of them all.
func (o *Options) Install(ctx context.Context) error {
	o.warn()
	cfgs := o.configs()
	mem, err := o.memory(ctx)
	if err != nil {
		return err
	}
	var members []apply.Item
	if o.MemberCredentials == CredentialsServiceAccount {
		if members, err = o.memberItems(cfgs); err != nil {
			return err
		}
	}
	// What runs sync is checked by name: its kubeconfigs are not known yet.
	dyns := make([]dynamic.Interface, len(cfgs))
	checked := append([]apply.Item{}, members...)
	for i := range cfgs {
		cfgs[i].Memory = mem
		if dyns[i], err = o.clientOf(cfgs[i]); err != nil {
			return err
		}
		items, err := itemsOf(o.siteID(cfgs[i]), dyns[i], HostObjects(cfgs[i], nil))
		if err != nil {
			return err
		}
		checked = append(checked, items...)
	}
	if err := apply.CheckOwnership(ctx, checked); err != nil {
		return err
	}
	written, err := o.apply(ctx, members)
	if err != nil {
		return err
	}
	for i, c := range cfgs {
		kubeconfigs, err := o.kubeconfigs(ctx, o.installedToken, c.Local)
		if err != nil {
			return err
		}
		items, err := itemsOf(o.siteID(c), dyns[i], HostObjects(c, kubeconfigs))
		if err != nil {
			return err
		}
		more, err := o.apply(ctx, items)
		if err != nil {
			return err
		}
		written = append(written, more...)
	}
	return o.Write.Print.PrintObjects(o.Out, written)
}

// clientOf is the client of the cluster that runs c's Deployment.
func (o *Options) clientOf(c Config) (dynamic.Interface, error) {
	if c.Local != "" {
		return o.member(c.Local).Dynamic, nil
	}
	dyn, err := o.HostConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %q (--context): %w", o.Host, err)
	}
	return dyn, nil
}

// siteID names the cluster that runs c's Deployment in output.
func (o *Options) siteID(c Config) string {
	if c.Local != "" {
		return c.Local
	}
	return o.hostID()
}

func (o *Options) member(id string) *clusterset.Connection {
	for _, m := range o.Members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// memberItems are every member's memberObjects, to apply.
func (o *Options) memberItems(cfgs []Config) ([]apply.Item, error) {
	var all []apply.Item
	for i, m := range o.Members {
		objs, err := o.memberObjects(cfgs, i)
		if err != nil {
			return nil, err
		}
		items, err := itemsOf(m.ID, m.Dynamic, objs)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
	}
	return all, nil
}

// memberObjects are member i's ServiceAccounts, token Secrets and roles (pkg/rbac), and the
// admission policy when the member serves it (else a warning: RBAC alone confines the writer).
func (o *Options) memberObjects(cfgs []Config, i int) ([]runtime.Object, error) {
	m, c := o.Members[i], cfgs[0]
	if m.Err != nil {
		return nil, fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
	}
	if o.perMember() {
		c = cfgs[i]
	}
	objs := MemberObjects(c, c.Members[i], rbac.SyncRules)
	served, err := policyServed(m)
	if err != nil {
		return nil, err
	}
	if !served {
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q: %s validatingadmissionpolicies not served (Kubernetes before 1.30): sync's writes there are confined by RBAC alone, without the admission policy %s\n",
			m.ID, policyGroupVersion, Name)
		return objs, nil
	}
	return append(objs, PolicyObjects(c.Namespace)...), nil
}

// hostID names the host in output: its cluster ID when a member, else its context.
func (o *Options) hostID() string {
	for _, m := range o.Members {
		if m.Context == o.Host {
			return m.ID
		}
	}
	return o.Host
}

// apply writes items. Under --dry-run=server an object in a namespace that does not exist yet
// (the Namespace is among what this install creates) cannot be sent: the apiserver would answer
// NotFound. Those are dry run by the client, as --dry-run=client would, saying so once per cluster.
func (o *Options) apply(ctx context.Context, items []apply.Item) ([]printers.Written, error) {
	if o.Write.DryRun != cmdutil.DryRunServer {
		return o.Write.ApplyEach(ctx, o.Out, items)
	}
	var out []printers.Written
	if o.absent == nil {
		o.absent = map[string]bool{}
	}
	absent := o.absent
	for _, it := range items {
		w := o.Write
		if ns := it.Object.GetNamespace(); ns != "" {
			key := it.Cluster + "/" + ns
			gone, seen := absent[key]
			if !seen {
				_, err := it.Client.Resource(resources["Namespace"]).Get(ctx, ns, metav1.GetOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("cluster %q: namespace %s: %w", it.Cluster, ns, err)
				}
				gone, absent[key] = err != nil, err != nil
				if gone {
					fmt.Fprintf(o.ErrOut, "Warning: cluster %q: namespace %s does not exist yet: the objects in it are checked by the client only\n", it.Cluster, ns)
				}
			}
			if gone {
				w.DryRun = cmdutil.DryRunClient
			}
		}
		ws, err := w.ApplyEach(ctx, o.Out, []apply.Item{it})
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return out, nil
}
