// Package unexpose implements `kubectl mcs unexpose`.
package unexpose

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/expose"
)

var (
	long = templates.LongDesc(`
		Remove what kubectl mcs expose created for a Service, and nothing else: only objects that
		carry the label app.kubernetes.io/managed-by=kubectl-mcs are deleted; others of the same
		name are reported and left alone.`)
	example = templates.Examples(`
		# Stop exporting demo/serve from every cluster
		kubectl mcs unexpose serve -n demo --contexts=member1,member2,member3

		# Remove the Karmada objects written by expose --karmada
		kubectl mcs unexpose serve --karmada-context=karmada-apiserver`)
)

// Options holds unexpose's flags: the same targets as expose.
type Options struct {
	expose.Options
}

// NewCmdUnexpose returns the unexpose command.
func NewCmdUnexpose(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{Options: expose.Options{ConfigFlags: flags, IOStreams: streams}}
	cmd := &cobra.Command{
		Use:     "unexpose SERVICE",
		Short:   "Remove exactly what expose created for a Service",
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd, args))
			cmdutil.CheckErr(o.Write.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	o.AddTargetFlags(cmd.Flags())
	apply.AddFlags(cmd, &o.Write)
	return cmd
}

// Run deletes every managed object expose would have written.
func (o *Options) Run(ctx context.Context) error {
	items, err := o.Plan(ctx, true)
	if err != nil {
		return err
	}
	return o.Write.Delete(ctx, o.Out, o.ErrOut, items)
}
