package printers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
)

// ResourcePrinter and IsTerminal are cli-runtime's, so that a command needs only this package to
// print.
type ResourcePrinter = cliprinters.ResourcePrinter

// IsTerminal says whether w is a terminal (colour, redraws).
var IsTerminal = cliprinters.IsTerminal

// PrintFlags is -o of the commands that read (status): the table (default), wide, name, json,
// yaml and kubectl's jsonpath printers. Not go-template, nor cli-runtime's PrintFlags that brings it:
// text/template calls methods by name, which keeps the linker from dropping any exported method
// of any type in the binary, and that almost doubled kubectl-mcs (64 MB against 35 MB).
type PrintFlags struct {
	JSONPathPrintFlags *genericclioptions.JSONPathPrintFlags
	OutputFormat       *string
}

// NewPrintFlags returns the default: a table.
func NewPrintFlags() *PrintFlags {
	format := ""
	return &PrintFlags{JSONPathPrintFlags: genericclioptions.NewJSONPathPrintFlags("", false), OutputFormat: &format}
}

// AllowedFormats lists what -o accepts.
func (f *PrintFlags) AllowedFormats() []string {
	return slices.Concat([]string{"wide", "name", "json", "yaml"}, f.JSONPathPrintFlags.AllowedFormats())
}

// AddFlags registers -o and the jsonpath flags (--template, --allow-missing-template-keys).
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	f.JSONPathPrintFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(f.OutputFormat, "output", "o", *f.OutputFormat, outputUsage(f.AllowedFormats()))
}

// Wide says whether -o wide was asked for.
func (f *PrintFlags) Wide() bool { return *f.OutputFormat == "wide" }

// Name says whether -o name was asked for: one kind.group/name line per object, which the
// command writes (its objects are not API objects).
func (f *PrintFlags) Name() bool { return *f.OutputFormat == "name" }

// ToPrinter returns the printer of -o, or nil for the table (default and wide) and name.
func (f *PrintFlags) ToPrinter() (ResourcePrinter, error) {
	switch format := *f.OutputFormat; format {
	case "", "wide", "name":
		return nil, nil
	case "json":
		return JSONPrinter{}, nil
	case "yaml":
		return &cliprinters.YAMLPrinter{}, nil
	default:
		p, err := f.JSONPathPrintFlags.ToPrinter(format)
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return nil, unknownFormat(format, f.AllowedFormats())
		}
		return p, err
	}
}

func outputUsage(formats []string) string {
	return fmt.Sprintf("Output format. One of: (%s).", strings.Join(formats, ", "))
}

// unknownFormat is the error for an -o value a command does not print.
func unknownFormat(format string, allowed []string) error {
	hint := ""
	if strings.HasPrefix(format, "go-template") || strings.HasPrefix(format, "template") {
		hint = " (go-template is not supported: use jsonpath)"
	}
	return fmt.Errorf("--output %q: must be one of %s%s", format, strings.Join(allowed, ", "), hint)
}
