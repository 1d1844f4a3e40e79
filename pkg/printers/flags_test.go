package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// statusFormats is what `status -o` accepted and refused before PrintFlags moved here: the
// printer (or the table, nil) of every accepted format, and the words of every refusal.
var statusFormats = []struct {
	format  string
	printer bool   // a printer (json, yaml, jsonpath) rather than the table
	refused string // part of the error; "" when accepted
}{
	{"", false, ""},
	{"wide", false, ""},
	{"json", true, ""},
	{"yaml", true, ""},
	{"jsonpath={.items}", true, ""},
	{"jsonpath-as-json={.items}", true, ""},
	{"name", false, ""},
	{"names", false, "must be one of wide, name, json, yaml, jsonpath, jsonpath-as-json, jsonpath-file"},
	{"custom-columns=A:.a", false, "must be one of wide"},
	{"go-template={{.kind}}", false, "go-template is not supported: use jsonpath"},
	{"go-template-file=x.tmpl", false, "go-template is not supported: use jsonpath"},
	{"template={{.kind}}", false, "go-template is not supported: use jsonpath"},
	{"jsonpath={.items[", false, "error parsing jsonpath"},
}

func TestPrintFlagsFormats(t *testing.T) {
	for _, tc := range statusFormats {
		f := NewPrintFlags()
		*f.OutputFormat = tc.format
		p, err := f.ToPrinter()
		switch {
		case tc.refused == "" && (err != nil || (p != nil) != tc.printer):
			t.Errorf("-o %q: printer %v, err %v; want printer=%v", tc.format, p, err, tc.printer)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("-o %q: err %v, want it to say %q", tc.format, err, tc.refused)
		}
		if f.Wide() != (tc.format == "wide") || f.Name() != (tc.format == "name") {
			t.Errorf("-o %q: Wide() = %v, Name() = %v", tc.format, f.Wide(), f.Name())
		}
	}
}

func TestPrintFlagsRegisterKubectlFlags(t *testing.T) {
	cmd := &cobra.Command{Use: "status"}
	f := NewPrintFlags()
	f.AddFlags(cmd)
	for _, name := range []string{"output", "template", "allow-missing-template-keys"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("--%s not registered", name)
		}
	}
	if got := cmd.Flags().Lookup("output").Usage; got != "Output format. One of: (wide, name, json, yaml, jsonpath, jsonpath-as-json, jsonpath-file)." {
		t.Errorf("-o usage %q", got)
	}
	if err := cmd.Flags().Parse([]string{"-o", "jsonpath", "--template", "{.kind}"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	if err := p.PrintObj(obj, &b); err != nil || b.String() != "List" {
		t.Errorf("-o jsonpath --template: %q, %v", b.String(), err)
	}
}
