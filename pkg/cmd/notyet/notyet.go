// Package notyet stands in for commands whose issues have not landed.
package notyet

import (
	"fmt"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCmd returns a command that fails with "not yet implemented".
func NewCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		DisableFlagParsing: true,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(fmt.Errorf("kubectl mcs %s: not yet implemented", use))
		},
	}
}
