package synccmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// completeInstall prepares --print-manifests (pkg/install): the host is the --context cluster,
// as every kubectl command's target is. It prints and writes nothing; the deprecated --apply
// installs, as kubectl mcs install does.
func (o *Options) completeInstall(cmd *cobra.Command, loader *clusterset.Loader) error {
	if o.Watch {
		return errors.New("--print-manifests prints what runs sync --watch; it does not go with --watch")
	}
	if cmd.Flags().Changed("namespace") {
		return errors.New("--print-manifests generates a sync of every namespace; -n does not go with it")
	}
	if !o.Apply {
		switch o.Write.Print.Format {
		case "", "yaml", "json":
		default:
			return fmt.Errorf("--output %q: --print-manifests prints yaml or json", o.Write.Print.Format)
		}
		if o.Write.DryRun == cmdutil.DryRunServer {
			return errors.New("--print-manifests writes nothing; to have the apiservers check the objects, run install with the same flags:" +
				shell.Block(shell.MCS("install", "--dry-run=server")))
		}
	}
	flags := o.Install
	flags.LeaseContext = o.LeaderContext
	flags.UnreachableTimeout = o.UnreachableTimeout
	var err error
	if o.install, err = install.NewOptions(flags, loader, o.members, o.Write, o.Out, o.ErrOut); err != nil {
		return err
	}
	return o.install.Validate()
}
