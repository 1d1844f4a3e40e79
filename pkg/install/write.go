package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// Install gives every member what the credentials need (ServiceAccount, roles, token Secret;
// nothing with --member-credentials=current), waits for the tokens, then applies the host's
// objects. Ownership is checked in every cluster before the first write; each object written is
// a line on Out (kubectl's), or with -o yaml|json one document of them all.
func (o *Options) Install(ctx context.Context) error {
	o.warn()
	cfg := o.Config()
	var err error
	if cfg.Memory, err = o.memory(ctx); err != nil {
		return err
	}
	dyn, err := o.HostConfig()
	if err != nil {
		return fmt.Errorf("cluster %q (--context): %w", o.Host, err)
	}
	var members []apply.Item
	if o.MemberCredentials == CredentialsServiceAccount {
		if members, err = o.memberItems(cfg); err != nil {
			return err
		}
	}
	// The host's objects are checked by name: their kubeconfigs are not known yet.
	host, err := itemsOf(o.hostID(), dyn, HostObjects(cfg, nil))
	if err != nil {
		return err
	}
	if err := apply.CheckOwnership(ctx, append(append([]apply.Item{}, members...), host...)); err != nil {
		return err
	}
	written, err := o.apply(ctx, members)
	if err != nil {
		return err
	}
	kubeconfigs, err := o.kubeconfigs(ctx, o.installedToken)
	if err != nil {
		return err
	}
	if host, err = itemsOf(o.hostID(), dyn, HostObjects(cfg, kubeconfigs)); err != nil {
		return err
	}
	more, err := o.apply(ctx, host)
	if err != nil {
		return err
	}
	return o.Write.Print.PrintObjects(o.Out, append(written, more...))
}

// memberItems are every member's ServiceAccount, token Secret and roles (pkg/rbac).
func (o *Options) memberItems(cfg Config) ([]apply.Item, error) {
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
	return all, nil
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
