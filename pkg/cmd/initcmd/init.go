// Package initcmd implements `kubectl mcs init`.
package initcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/about"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

var (
	long = templates.LongDesc(`
		Install the ServiceExport and ServiceImport CRDs shipped with sigs.k8s.io/mcs-api into every
		member of the clusterset, by server-side apply. Running it again changes nothing. CRDs that
		are already installed by someone else (Karmada, another MCS controller) are left alone.

		--clusterset NAME also installs the ClusterProperty CRD (about.k8s.io) and writes each
		member's cluster.clusterset.k8s.io (its cluster ID) and clusterset.k8s.io (NAME) properties;
		every command then takes the member's ID from there.

		--dns adds one server block, between kubectl-mcs marker comments, to each member's CoreDNS
		Corefile: CoreDNS forwards the clusterset zone (clusterset.local) to the member's own DNS
		server, kubectl mcs dns-server, which answers NAME.NS.svc.clusterset.local, its SRV records
		and the per-endpoint names HOSTNAME.CLUSTERID.NAME.NS.svc.clusterset.local from the member's
		ServiceImports and the EndpointSlices sync writes there. The DNS server runs in each member
		as the Deployment and Service that "kubectl mcs dns-server --print-manifests" generates;
		--dns forwards to that Service's ClusterIP (port 53), read in each member, and fails before
		writing anything where the Service does not exist or has no ready endpoint (--dns-wait=2m
		waits for one). --dns-server=IP[:PORT] names one address for every member instead (a DNS
		server beside CoreDNS: 127.0.0.1:5353). A --dns-domain that the Corefile already serves (a
		server block, or a kubernetes, file, multicluster, forward or rewrite stanza for the zone,
		a zone under it or one holding it: cluster.local, local, in-addr.arpa) is refused. Nothing
		is added to CoreDNS itself: a stock CoreDNS forwards. --dns=false removes exactly that block
		and installs nothing.`)
	example = templates.Examples(`
		# Install the CRDs into three clusters
		kubectl mcs init --contexts=member1,member2,member3

		# Show what would be installed
		kubectl mcs init --contexts=member1 --dry-run=client -o yaml

		# Name the clusterset and its members' IDs, and serve clusterset.local names from each
		# member's DNS server (applied first: kubectl mcs dns-server --print-manifests)
		kubectl mcs init --contexts=ctx-east=east,ctx-west=west --clusterset=prod \
		    --dns

		# The same just after applying the DNS servers: wait up to 2 minutes for their pods
		kubectl mcs init --contexts=ctx-east=east,ctx-west=west --dns --dns-wait=2m

		# Forward clusterset.local to a DNS server on the CoreDNS nodes' loopback
		kubectl mcs init --contexts=member1,member2 --dns --dns-server=127.0.0.1:5353`)
)

// Options holds init's flags and state.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
	Write       apply.Flags
	Wait        time.Duration
	DNS         DNSFlags
	// ClustersetName is --clusterset: the clusterset.k8s.io ClusterProperty to write.
	ClustersetName string

	members []*clusterset.Connection
	genericiooptions.IOStreams
}

// NewCmdInit returns the init command.
func NewCmdInit(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "init --contexts=CTX[=ID],...",
		Short:   "Install the ServiceExport/ServiceImport CRDs into every member cluster",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.DNS.Validate(cmd))
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	o.Clusterset.AddFlags(cmd.Flags())
	apply.AddFlags(cmd, &o.Write)
	cmd.Flags().DurationVar(&o.Wait, "wait", 30*time.Second, "How long to wait for the CRDs to become Established (0: do not wait).")
	cmd.Flags().StringVar(&o.ClustersetName, "clusterset", "", "Name of the clusterset: writes the ClusterProperties clusterset.k8s.io and cluster.clusterset.k8s.io (the member's ID) into every member.")
	o.DNS.AddFlags(cmd)
	return cmd
}

// Complete resolves and connects the clusterset.
func (o *Options) Complete(cmd *cobra.Command) error {
	if err := o.Write.Complete(cmd); err != nil {
		return err
	}
	o.DNS.Complete(cmd)
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset}
	refs, err := loader.Refs(true)
	if err != nil {
		return err
	}
	o.members = loader.Connect(cmd.Context(), refs)
	return nil
}

// Validate checks flags and that every member is reachable: init is all or nothing.
func (o *Options) Validate() error {
	if err := o.Write.Validate(); err != nil {
		return err
	}
	if err := o.validateClusterset(); err != nil {
		return err
	}
	return clusterset.FirstError(o.members)
}

// Run applies the CRDs to every member, then writes the ClusterProperties and the Corefiles; the
// Corefiles are read and checked in every member before anything is written.
func (o *Options) Run(ctx context.Context) error {
	var edits []dnsEdit
	if o.DNS.set {
		var err error
		if edits, err = o.planDNS(ctx); err != nil {
			return err
		}
	}
	// --dns=false removes the Corefile block and installs nothing: run after an uninstall, it
	// would put back the CRDs that were removed. --clusterset still writes what it names.
	var crds []*unstructured.Unstructured
	if !o.DNS.set || o.DNS.Enable {
		var err error
		if crds, err = mcsapi.CRDs(); err != nil {
			return err
		}
	}
	if o.ClustersetName != "" {
		crd, err := about.CRD()
		if err != nil {
			return err
		}
		crds = append(crds, crd)
	}
	var items []apply.Item
	for _, m := range o.members {
		for _, crd := range crds {
			c := crd.DeepCopy()
			labels := c.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[names.ManagedByLabel] = names.ManagedByValue
			c.SetLabels(labels)
			items = append(items, apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: mcsapi.CRDResource, Object: c})
		}
	}
	ours, err := o.partition(ctx, items)
	if err != nil {
		return err
	}
	if len(items) > 0 {
		if err := o.Write.Apply(ctx, o.Out, ours); err != nil {
			return err
		}
	}
	if o.Write.DryRun == cmdutil.DryRunNone && o.Wait != 0 {
		for _, it := range ours {
			if err := waitEstablished(ctx, it, o.Wait); err != nil {
				return err
			}
		}
	}
	if o.ClustersetName != "" {
		if err := o.applyOurs(ctx, o.propertyItems()); err != nil {
			return err
		}
	}
	if o.DNS.set {
		return o.runDNS(ctx, edits)
	}
	return nil
}

// partition keeps the items that are absent or ours and says which ones are left alone.
func (o *Options) partition(ctx context.Context, items []apply.Item) ([]apply.Item, error) {
	ours, foreign, err := apply.Partition(ctx, items)
	if err != nil {
		return nil, err
	}
	for _, it := range foreign {
		kind, what := apply.ResourceName(it.GVR), "already exists"
		if it.GVR == mcsapi.CRDResource {
			kind, what = "customresourcedefinition", "is already installed"
		}
		fmt.Fprintf(o.ErrOut, "%s: %s/%s %s and not managed by kubectl-mcs; left alone\n", it.Cluster, kind, it.Object.GetName(), what)
	}
	return ours, nil
}

func (o *Options) applyOurs(ctx context.Context, items []apply.Item) error {
	ours, err := o.partition(ctx, items)
	if err != nil {
		return err
	}
	return o.Write.Apply(ctx, o.Out, ours)
}

func waitEstablished(ctx context.Context, it apply.Item, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := it.Client.Resource(it.GVR).Get(ctx, it.Object.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not Established after %s", it.Ref(), timeout)
	}
	return nil
}
