// Package uninstallcmd implements `kubectl mcs uninstall`: what install, the DNS server's
// manifests and init --dns put into the clusters removed, in the order that keeps DNS answering.
package uninstallcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/uninstall"
)

var (
	long = templates.LongDesc(`
		Remove what kubectl mcs install (either --mode), the DNS server's manifests
		(kubectl mcs dns-server --print-manifests) and kubectl mcs init --dns put into the
		members of --contexts, in the order that keeps DNS answering. Every member finishes a
		step before the next begins:

		1. the kubectl-mcs block is removed from each member's CoreDNS Corefile (as
		   init --dns=false does), so that CoreDNS stops forwarding clusterset.local before
		   the DNS server goes; the rest of the Corefile stays byte for byte;
		2. the DNS server's Deployment, Service, ServiceAccount and roles;
		3. sync's Deployments, their kubeconfig Secret, the ServiceAccounts, tokens and roles
		   install gave them (the readers of --mode=per-member too) and the admission policy,
		   last, as it confines the writer while a token of it may still be valid;
		4. with --sync-objects, what sync wrote: ServiceImports, derived-NAME Services and the
		   EndpointSlices copied for them (after waiting for sync's pods to stop);
		5. with --crds, the ServiceExport and ServiceImport CRDs that kubectl mcs init
		   installed; refused, naming every export, while any ServiceExport exists, unless
		   --force, which deletes them with their CRD; then init --clusterset's
		   ClusterProperties, and their CRD unless someone else's property is left;
		6. the namespace kubectl-mcs-system, when kubectl-mcs created it and nothing of anybody
		   else's is left in it (else it is kept, naming what keeps it).

		What is deleted is what install writes, read from the same generation, and only where it
		carries app.kubernetes.io/managed-by=kubectl-mcs: nothing of the user's is touched, and
		their Services, EndpointSlices and ServiceExports stay. A cluster that cannot be reached
		is named in the error (exit 1) and the others are still cleaned; running uninstall again
		later finishes it. Running it twice is a no-op. In host mode, --context names the host
		when it is not one of --contexts.`)
	example = templates.Examples(`
		# Remove sync, the DNS servers and CoreDNS's forward from three members
		kubectl mcs uninstall --contexts=member1,member2,member3

		# Also what sync wrote, and the CRDs (refused while ServiceExports exist)
		kubectl mcs uninstall --contexts=member1,member2,member3 --sync-objects --crds

		# Host mode whose host is not a member
		kubectl mcs uninstall --contexts=member1,member2 --context=ops

		# What it would delete, deleting nothing
		kubectl mcs uninstall --contexts=member1,member2 --sync-objects \
		    --dry-run=client`)
)

// Options holds uninstall's flags.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
	// Write is --dry-run, --field-manager (the Corefile's update) and -o.
	Write                    apply.Flags
	SyncObjects, CRDs, Force bool
	ConfigMap                string
	Wait                     bool
	Timeout                  time.Duration

	uninstall *uninstall.Options
	genericiooptions.IOStreams
}

// NewCmdUninstall returns the uninstall command.
func NewCmdUninstall(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "uninstall --contexts=CTX[=ID],...",
		Short:   "Remove what install, the DNS servers and init --dns put in, keeping DNS answering",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	f := cmd.Flags()
	o.Clusterset.AddFlags(f)
	apply.AddFlags(cmd, &o.Write)
	f.BoolVar(&o.SyncObjects, "sync-objects", false, "Also delete what sync wrote: ServiceImports, derived-NAME Services and the EndpointSlices copied for them (ours only; the ServiceExports stay)")
	f.BoolVar(&o.CRDs, "crds", false, "Also delete the ServiceExport and ServiceImport CRDs and the ClusterProperties kubectl mcs init installed (implies --sync-objects); refused while any ServiceExport exists, unless --force")
	f.BoolVar(&o.Force, "force", false, "With --crds: delete the CRDs even while ServiceExports exist, which deletes those exports with them")
	f.StringVar(&o.ConfigMap, "dns-configmap", "kube-system/coredns", "NAMESPACE/NAME of the ConfigMap holding CoreDNS's Corefile (as given to init --dns)")
	f.BoolVar(&o.Wait, "wait", true, "Wait for sync's pods to stop before deleting what sync wrote, and for the CRDs and namespaces to be gone")
	f.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "How long --wait waits for each")
	return cmd
}

// Complete connects to the clusterset and, when it is not a member, the --context host.
func (o *Options) Complete(cmd *cobra.Command) error {
	if err := o.Write.Complete(cmd); err != nil {
		return err
	}
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset}
	refs, err := loader.Refs(true)
	if err != nil {
		return err
	}
	ns, name, _ := strings.Cut(o.ConfigMap, "/")
	o.uninstall = &uninstall.Options{
		Members: loader.Connect(cmd.Context(), refs), SyncObjects: o.SyncObjects || o.CRDs, CRDs: o.CRDs, Force: o.Force,
		ConfigMapNamespace: ns, ConfigMapName: name, Wait: o.Wait, Timeout: o.Timeout,
		Write: o.Write, Out: o.Out, ErrOut: o.ErrOut,
	}
	// The host of host mode, named by --context, is cleaned too when it is not a member; the
	// current context alone never is (it may be a cluster of another clusterset).
	if host := *o.ConfigFlags.Context; host != "" {
		for _, r := range refs {
			if r.Context == host {
				return nil
			}
		}
		o.uninstall.Host = loader.Connect(cmd.Context(), []clusterset.Ref{{Context: host, ID: host}})[0]
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := o.Write.Validate(); err != nil {
		return err
	}
	if ns, name, ok := strings.Cut(o.ConfigMap, "/"); !ok || ns == "" || name == "" {
		return fmt.Errorf("--dns-configmap %q: want NAMESPACE/NAME", o.ConfigMap)
	}
	if o.Force && !o.CRDs {
		return fmt.Errorf("--force goes with --crds")
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %s: want a duration above 0", o.Timeout)
	}
	return clusterset.IDErrors(o.uninstall.Members)
}

// Run uninstalls.
func (o *Options) Run(ctx context.Context) error { return o.uninstall.Run(ctx) }
