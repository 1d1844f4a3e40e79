// Package unexpose implements `kubectl mcs unexpose`.
package unexposecmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/export"
)

var (
	long = templates.LongDesc(`
		Remove what kubectl mcs expose created for a Service, and nothing else: only objects that
		carry the label app.kubernetes.io/managed-by=kubectl-mcs are deleted; others of the same
		name are reported and left alone. The clusterset is --contexts, else $KUBECTL_MCS_CONTEXTS,
		else the --context cluster alone; it is never guessed.`)
	example = templates.Examples(`
		# Stop exporting demo/serve from every cluster
		kubectl mcs unexpose serve -n demo --contexts=member1,member2,member3

		# Remove the Karmada objects written by expose --karmada
		kubectl mcs unexpose serve --karmada-context=karmada-apiserver`)
)

// Flags are unexpose's flags: the same targets as expose, and the write flags.
type Flags struct {
	Target export.TargetFlags
	Write  apply.Flags
}

// Options is unexpose parsed: the export whose objects go.
type Options struct {
	Target export.Target
	Write  apply.Flags
	genericiooptions.IOStreams
}

// NewCmdUnexpose returns the unexpose command.
func NewCmdUnexpose(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	f := &Flags{}
	cmd := &cobra.Command{
		Use:     "unexpose SERVICE",
		Short:   "Remove exactly what expose created for a Service",
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		Run: func(cmd *cobra.Command, args []string) {
			o, err := f.ToOptions(cmd, flags, args[0], streams)
			cmdutil.CheckErr(err)
			cmdutil.CheckErr(o.Write.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	f.Target.AddFlags(cmd.Flags())
	apply.AddFlags(cmd, &f.Write)
	return cmd
}

// ToOptions parses the flags once.
func (f *Flags) ToOptions(cmd *cobra.Command, cf *genericclioptions.ConfigFlags, service string, streams genericiooptions.IOStreams) (*Options, error) {
	o := &Options{Write: f.Write, IOStreams: streams}
	if err := o.Write.Complete(cmd); err != nil {
		return nil, err
	}
	var err error
	o.Target, err = f.Target.ToTarget(cf, service)
	return o, err
}

// Run deletes every managed object an export of the service can own.
func (o *Options) Run(ctx context.Context) error {
	items, err := o.Target.Owned(ctx)
	if err != nil {
		return err
	}
	n, err := o.Write.Delete(ctx, o.Out, o.ErrOut, items)
	if err != nil {
		return err
	}
	o.summarize(n)
	return nil
}

// summarize says, on stderr (-o name keeps stdout to the objects), that there was nothing to
// remove, rather than nothing at all; or, after a direct unexpose, that the imports go only when
// sync runs (Karmada withdraws what it dispatched by itself).
func (o *Options) summarize(deleted int) {
	svc := o.Target.Namespace + "/" + o.Target.Service
	switch {
	case deleted == 0:
		fmt.Fprintf(o.ErrOut, "Nothing to remove: no object of kubectl mcs expose for %s was found.\n", svc)
	case !o.Target.Karmada && o.Write.DryRun == cmdutil.DryRunNone:
		fmt.Fprintf(o.ErrOut, "The next kubectl mcs sync withdraws what %s's exports imported (at once where sync --watch runs).\n", svc)
	}
}
