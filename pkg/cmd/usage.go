package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// Execute runs the command line and prints an error as kubectl does: "error: ..." on stderr and
// exit status 1, cobra's own errors included (component-base's cli.Run prints those as
// "Error: ...", unlike the commands' own).
func Execute(root *cobra.Command) {
	if err := cli.RunNoErrOutput(root); err != nil {
		cmdutil.CheckErr(err)
	}
}

// usageErrors ends cobra's usage errors under root (an unknown flag or command, a wrong number of
// arguments) with kubectl's hint line, naming the command's help.
func usageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(usageError)
	// Set, root's Args replaces cobra's unknown-command check, which offers no hint.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return usageError(c, errors.New(msg))
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if args := sub.Args; args != nil {
				sub.Args = func(c *cobra.Command, a []string) error {
					if err := args(c, a); err != nil {
						return usageError(c, err)
					}
					return nil
				}
			}
			walk(sub)
		}
	}
	walk(root)
}

func usageError(c *cobra.Command, err error) error {
	return fmt.Errorf("%w\nSee '%s --help' for usage.", err, c.CommandPath())
}
