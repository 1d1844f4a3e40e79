package cmd

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Help as kubectl prints it, wrapped as kubectl wraps it: to 80, 100 or 120 columns on a
// terminal that wide (k8s.io/kubectl/pkg/util/term), else to printers.Width, so that no line of
// any command's help is wider, but for a token that cannot be broken (a flag with its type, a URL).
// The descriptions go through templates.LongDesc, whose paragraphs are one line each and whose
// indented blocks (a table of names) are kept as they are: the paragraphs are filled here, the
// blocks left alone. Flags are kubectl's HelpFlagPrinter's. Functions, not cobra templates:
// text/template would keep every exported method in the binary (DEVELOPERS.md).

// helpWidth is kubectl's wrap limit for a terminal, printers.Width elsewhere.
func helpWidth(w io.Writer) int {
	switch tw := printers.TerminalWidth(w); {
	case tw >= 120:
		return 120
	case tw >= 100:
		return 100
	}
	return printers.Width
}

// setHelp makes every command under root print its help and usage wrapped.
func setHelp(root *cobra.Command) {
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		w := c.OutOrStdout()
		if text := strings.TrimRightFunc(or(c.Long, c.Short), unicode.IsSpace); text != "" {
			fmt.Fprintf(w, "%s\n\n", fill(text, helpWidth(w), false))
		}
		if c.Runnable() || c.HasSubCommands() {
			_ = usage(c, w)
		}
	})
	root.SetUsageFunc(func(c *cobra.Command) error { return usage(c, c.OutOrStderr()) })
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// usage is cobra's usage, with the examples and flags wrapped.
func usage(c *cobra.Command, w io.Writer) error {
	width := helpWidth(w)
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		fmt.Fprintf(&b, "\n  %s", printers.Wrap(c.UseLine(), 2, 4, width))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\n\nExamples:\n%s", fill(c.Example, width, true))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				pad := strings.Repeat(" ", sub.NamePadding()-len(sub.Name())+1)
				fmt.Fprintf(&b, "\n  %s%s%s", sub.Name(), pad, printers.Wrap(sub.Short, 3+sub.NamePadding(), 3+sub.NamePadding(), width))
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\n\nFlags:\n%s", flags(c.LocalFlags(), width))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\n\nGlobal Flags:\n%s", flags(c.InheritedFlags(), width))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// flags prints each flag as kubectl does: its name and default on a line, its usage wrapped
// under it after a tab (kubectl's HelpFlagPrinter, which leaves room for the tab's 8 columns).
func flags(fs *pflag.FlagSet, width int) string {
	var b strings.Builder
	p := templates.NewHelpFlagPrinter(&b, uint(width))
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			p.PrintHelpFlag(f)
		}
	})
	return strings.TrimRightFunc(b.String(), unicode.IsSpace)
}

// item is the start of a list item in a normalised description: "* " or "1. ".
var item = regexp.MustCompile(`^(\* |[0-9]+\. )`)

// fill wraps a normalised description (templates.LongDesc) or examples (templates.Examples) to
// width: each line is a paragraph, filled under its own indentation (a list item under its text,
// an example's comment as a comment), except a block indented by 8 or more (LongDesc's code
// blocks: a table) and an example's command, which are left whole (a long one is continued with
// " \" in the text itself, so that it still pastes).
func fill(text string, width int, examples bool) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		lines[i] = l
		body := strings.TrimLeft(l, " ")
		n := len(l) - len(body)
		switch {
		case body == "" || n >= 8 || len(l) <= width:
		case examples && strings.HasPrefix(body, "# "):
			lines[i] = l[:n] + "# " + strings.ReplaceAll(printers.Wrap(body[2:], n+2, n+2, width),
				"\n"+strings.Repeat(" ", n+2), "\n"+strings.Repeat(" ", n)+"# ")
		case examples:
		default:
			hang := n + len(item.FindString(body))
			lines[i] = l[:n] + printers.Wrap(body, n, hang, width)
		}
	}
	return strings.Join(lines, "\n")
}
