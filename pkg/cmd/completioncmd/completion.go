// Package completion implements `kubectl mcs completion` and the dynamic completion of flag values
// and arguments (kubeconfig contexts, namespaces, Services) that kubectl's plugin completion asks
// the plugin for.
package completioncmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"
)

// Shells are the shells `completion` writes code for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

var (
	long = templates.LongDesc(`
		Print the shell completion code of kubectl-mcs for bash, zsh, fish or PowerShell.

		The words after "kubectl mcs" are completed by kubectl's own completion (kubectl 1.26 or
		later, loaded with "kubectl completion SHELL"): kubectl runs kubectl_complete-mcs from
		PATH, a two-line script shipped in the release archives next to kubectl-mcs, which asks the
		plugin for the candidates. Commands and flags are completed, and so are kubeconfig contexts for --context,
		--contexts (after the last comma), --karmada-context and --leader-elect-context, cluster IDs
		for --providers and --consumers, namespaces for -n, and Services for the SERVICE argument.

		The code printed by this command completes the plugin when it is run directly as
		kubectl-mcs.`)

	example = templates.Examples(`
		# kubectl mcs <TAB> (with kubectl's completion loaded): put kubectl_complete-mcs on PATH
		install -m 0755 kubectl_complete-mcs ~/.local/bin/

		# bash: complete kubectl-mcs in the current shell, and in every new one
		source <(kubectl mcs completion bash)
		kubectl mcs completion bash \
		    > ~/.local/share/bash-completion/completions/kubectl-mcs

		# zsh (compinit loaded)
		source <(kubectl mcs completion zsh)

		# fish
		kubectl mcs completion fish > ~/.config/fish/completions/kubectl-mcs.fish

		# PowerShell
		kubectl mcs completion powershell | Out-String | Invoke-Expression`)
)

// Options holds completion's arguments.
type Options struct {
	Shell string
	genericiooptions.IOStreams
}

// NewCmdCompletion returns the completion command.
func NewCmdCompletion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams}
	cmd := &cobra.Command{
		Use:                   "completion SHELL",
		DisableFlagsInUseLine: true,
		Short:                 "Print the shell completion code of kubectl-mcs (bash, zsh, fish, powershell)",
		Long:                  long,
		Example:               example,
		ValidArgs:             Shells,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(args))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Root()))
		},
	}
	return cmd
}

// Complete takes the shell from the arguments.
func (o *Options) Complete(args []string) error {
	switch len(args) {
	case 0:
		return fmt.Errorf("shell not specified: one of %s", strings.Join(Shells, ", "))
	case 1:
		o.Shell = args[0]
		return nil
	}
	return fmt.Errorf("too many arguments: want one shell (%s)", strings.Join(Shells, ", "))
}

// Validate checks the shell.
func (o *Options) Validate() error {
	if !slices.Contains(Shells, o.Shell) {
		return fmt.Errorf("unsupported shell %q: one of %s", o.Shell, strings.Join(Shells, ", "))
	}
	return nil
}

// Run writes the completion code of root, with descriptions.
func (o *Options) Run(root *cobra.Command) error {
	switch o.Shell {
	case "bash":
		return root.GenBashCompletionV2(o.Out, true)
	case "zsh":
		return root.GenZshCompletion(o.Out)
	case "fish":
		return root.GenFishCompletion(o.Out, true)
	default:
		return root.GenPowerShellCompletionWithDesc(o.Out)
	}
}
