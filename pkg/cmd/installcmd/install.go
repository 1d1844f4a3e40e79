// Package installcmd implements `kubectl mcs install`: sync --watch installed to run in a
// cluster of the clusterset, acting in every member as a least-privilege ServiceAccount.
package installcmd

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

var (
	long = templates.LongDesc(`
		Install sync --watch to run in the --context cluster (the host) for the clusterset
		--contexts: two replicas under leader election, reading every member through a kubeconfig
		of its own.

		In every member it first creates, with your context's rights, a ServiceAccount with
		exactly the rights sync uses, its roles and a token Secret, and waits for the token
		(with --member-credentials=current nothing there: your kubeconfig's credentials are
		embedded instead). Then it applies, in the host, the Namespace kubectl-mcs-system, a
		ServiceAccount, the Secret of the members' kubeconfigs, the Deployment and its
		PodDisruptionBudget. It never changes an object it did not create, and checks that in
		every cluster before the first write.

		The pods reach each member at the address its kubeconfig embeds: the host's own apiserver
		at https://kubernetes.default.svc, every other member at the server of your kubeconfig, or
		the address --member-server gives. A kubeconfig server the pods cannot reach (a loopback
		or link-local address, such as a local cluster's 127.0.0.1) is refused before anything is
		written, naming the member and the flag to pass.

		In every member it also applies a ValidatingAdmissionPolicy and its binding that confine
		the writer ServiceAccount, whoever holds its token, to the Services and EndpointSlices
		kubectl-mcs manages and its own Lease; a member that does not serve
		admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies (before Kubernetes 1.30) gets
		a warning and RBAC alone.

		With --mode=per-member every member runs its own sync (sync --local=ID), acting there as
		the writer ServiceAccount through its pods' own token, with its Lease at home, and reading
		every other member through a read-only identity that member gives it
		(kubectl-mcs-reader-ID: get, list and watch of what sync reads, nothing else). No cluster
		then holds a token that writes in another. The pods of every member must reach every
		other member's apiserver, which install cannot check; --member-server gives the address
		they use for a member. --context and --member-credentials=current do not apply.

		Then it waits (--wait, the default; --wait=false returns once written), up to --timeout,
		as kubectl rollout status and kubectl wait do: for every Deployment it wrote to roll out,
		and for the leader of the new pods to report on its Lease that it reads every member. A
		member the leader still cannot read when --timeout runs out fails the command, a line
		each naming the member, the address the pods use and the error they get; anything else
		still missing (a rollout, a leader) is said as it stands. A dry run does not wait.

		kubectl mcs sync --print-manifests prints the host's objects as installed (per member:
		every member's), writing nothing.`)
	example = templates.Examples(`
		# Run sync in member1 for a clusterset of three
		kubectl mcs install --contexts=member1,member2,member3 --context=member1

		# Clusters whose kubeconfigs say 127.0.0.1: the addresses the pods in member1 use
		kubectl mcs install --contexts=member1,member2 --context=member1 \
		    --member-server=member2=https://172.18.0.3:6443

		# Every member runs its own sync, reading the others with read-only identities
		kubectl mcs install --mode=per-member --contexts=member1,member2,member3 \
		    --member-server=member1=https://172.18.0.2:6443 \
		    --member-server=member2=https://172.18.0.3:6443 \
		    --member-server=member3=https://172.18.0.4:6443

		# Return once written, without waiting for the pods and their leader
		kubectl mcs install --contexts=member1,member2 --context=member1 --wait=false

		# What it would write, without writing, and the apiservers' check of it
		kubectl mcs install --contexts=member1,member2 --context=member1 \
		    --dry-run=client
		kubectl mcs install --contexts=member1,member2 --context=member1 \
		    --dry-run=server`)
)

// Options holds install's flags.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
	Install     install.Flags
	// Write is --dry-run, --field-manager and -o.
	Write apply.Flags
	// Wait and Timeout: wait after the writes for the rollout and the leader's view, how long.
	Wait    bool
	Timeout time.Duration

	install *install.Options
	genericiooptions.IOStreams
}

// NewCmdInstall returns the install command.
func NewCmdInstall(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmd(&Options{ConfigFlags: flags, IOStreams: streams})
}

func newCmd(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "install --contexts=CTX[=ID],... (--context=HOST | --mode=per-member)",
		Short:   "Install sync --watch to run in a cluster, or in every member (two replicas, least-privilege credentials)",
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
	o.Install.AddFlags(f, "")
	o.Install.AddSyncFlags(f)
	f.BoolVar(&o.Wait, "wait", true, "Wait for the Deployments to roll out and for the leader of the new pods to report every member read; a member it cannot read fails the command, naming the address the pods use (no wait with --dry-run)")
	f.DurationVar(&o.Timeout, "timeout", install.DefaultWaitTimeout, "How long --wait waits, once everything is written")
	return cmd
}

// Complete connects to the clusterset and the host.
func (o *Options) Complete(cmd *cobra.Command) error {
	if err := o.Write.Complete(cmd); err != nil {
		return err
	}
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset}
	refs, err := loader.Refs(true)
	if err != nil {
		return err
	}
	o.install, err = install.NewOptions(o.Install, loader, loader.Connect(cmd.Context(), refs), o.Write, o.Out, o.ErrOut)
	return err
}

// Validate checks the flags, the members' IDs and the addresses the pods will use.
func (o *Options) Validate() error {
	if err := o.Write.Validate(); err != nil {
		return err
	}
	if o.Wait && o.Timeout <= 0 {
		return errors.New("--timeout must be greater than 0 (or pass --wait=false)")
	}
	if err := clusterset.IDErrors(o.install.Members); err != nil {
		return err
	}
	if err := o.install.Validate(); err != nil {
		return err
	}
	if o.Wait && o.Write.DryRun == cmdutil.DryRunNone {
		o.install.Waits()
	}
	return nil
}

// Run installs, then waits unless told not to or nothing was written.
func (o *Options) Run(ctx context.Context) error {
	if err := o.install.Install(ctx); err != nil {
		return err
	}
	if !o.Wait || o.Write.DryRun != cmdutil.DryRunNone {
		return nil
	}
	return o.install.Wait(ctx, o.Timeout)
}
