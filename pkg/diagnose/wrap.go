package diagnose

import "github.com/kubectl-mcs/kubectl-mcs/pkg/printers"

// DefaultWidth is the width the text output fits when it does not go to a terminal.
const DefaultWidth = printers.Width

// wrap fills prose into lines of at most width columns (printers.Wrap). Commands are never
// prose: they are printed on lines of their own (shell.Command.Lines).
func wrap(text string, first, indent, width int) string {
	return printers.Wrap(text, first, indent, width)
}
