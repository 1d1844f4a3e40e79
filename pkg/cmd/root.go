// Package cmd assembles the kubectl-mcs command tree.
package cmd

import (
	goflag "flag"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/completioncmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/diagnosecmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/dnsservercmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/exposecmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/initcmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/installcmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/statuscmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/synccmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/unexposecmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/uninstallcmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/versioncmd"
)

var long = templates.LongDesc(`
	Multi-cluster Services for kubectl and karmadactl.

	kubectl mcs writes the Multi-Cluster Services API objects (KEP-1645 ServiceExport and
	ServiceImport) and Karmada's MultiClusterService and PropagationPolicy for you, and can itself
	act as the MCS controller of a clusterset: a set of kubeconfig contexts named with --contexts.`)

var example = templates.Examples(`
	# The first hour: install the CRDs, export demo/serve, import it in every member
	kubectl mcs init --contexts=member1,member2
	kubectl mcs expose serve -n demo --contexts=member1,member2
	kubectl mcs sync --contexts=member1,member2`)

// NewCmdMCS returns the root command, `kubectl mcs`.
func NewCmdMCS(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().WithDiscoveryBurst(300).WithDiscoveryQPS(50)
	cmd := &cobra.Command{
		Use:     "kubectl-mcs",
		Short:   "Multi-cluster Services (KEP-1645, Karmada) for kubectl",
		Long:    long,
		Example: example,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl mcs",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		Run: func(cmd *cobra.Command, args []string) {
			_ = cmd.Help()
		},
	}
	flags.AddFlags(cmd.PersistentFlags())
	prof := &profiling{}
	prof.addFlags(cmd.PersistentFlags())
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error { return prof.start() }
	cmd.PersistentPostRunE = func(*cobra.Command, []string) error { return prof.flush() }
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	for _, name := range []string{"v", "vmodule"} {
		cmd.PersistentFlags().AddGoFlag(klogFlags.Lookup(name))
	}
	// Listed in the order of a first hour, not alphabetically.
	cobra.EnableCommandSorting = false
	cmd.AddCommand(
		initcmd.NewCmdInit(flags, streams),
		exposecmd.NewCmdExpose(flags, streams),
		synccmd.NewCmdSync(flags, streams),
		installcmd.NewCmdInstall(flags, streams),
		statuscmd.NewCmdStatus(flags, streams),
		diagnosecmd.NewCmdDiagnose(flags, streams),
		dnsservercmd.NewCmdDNSServer(flags, streams),
		unexposecmd.NewCmdUnexpose(flags, streams),
		uninstallcmd.NewCmdUninstall(flags, streams),
		versioncmd.NewCmdVersion(streams),
		completioncmd.NewCmdCompletion(streams),
	)
	completioncmd.Register(cmd, flags)
	usageErrors(cmd)
	setHelp(cmd)
	return cmd
}
