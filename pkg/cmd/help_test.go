package cmd

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// help runs `kubectl mcs PATH... --help` and returns what it printed, tabs expanded as a
// terminal shows them.
func help(t *testing.T, path ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out})
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(path, "--help"))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		for i := strings.IndexByte(l, '\t'); i >= 0; i = strings.IndexByte(l, '\t') {
			l = l[:i] + strings.Repeat(" ", 8-i%8) + l[i+1:]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// unbreakable is a line that cannot be wrapped: one token (a URL, a flag with its default) or a
// flag's line ("-n, --namespace='default':").
var unbreakable = regexp.MustCompile(`^\s*(-[a-zA-Z], )?\S+$`)

// Every command's help fits printers.Width, as kubectl wraps its help (descriptions filled,
// flags by kubectl's HelpFlagPrinter, examples continued with " \"), but for what cannot be
// broken; dns-server's table of names keeps one row per line.
func TestHelpWidth(t *testing.T) {
	paths := [][]string{{}}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string(nil), path...), sub.Name())
			paths = append(paths, p)
			walk(sub, p)
		}
	}
	walk(NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}), nil)
	if len(paths) < 10 {
		t.Fatalf("%d commands", len(paths))
	}
	for _, p := range paths {
		out := help(t, p...)
		for _, l := range strings.Split(out, "\n") {
			if utf8.RuneCountInString(l) > printers.Width && !unbreakable.MatchString(l) {
				t.Errorf("kubectl mcs %s --help: %d columns: %q", strings.Join(p, " "), utf8.RuneCountInString(l), l)
			}
		}
	}

	out := help(t, "dns-server")
	for _, row := range []string{
		`NAME.NS.svc.ZONE\s+A/AAAA of the service`,
		`_PORT._PROTO.NAME.NS.svc.ZONE\s+SRV of a named port`,
		`HOSTNAME.CLUSTERID.NAME.NS.svc.ZONE\s+A/AAAA of one endpoint \(Headless\)`,
	} {
		if !regexp.MustCompile(`(?m)^ {4,}` + row + `$`).MatchString(out) {
			t.Errorf("dns-server --help: no line %q:\n%s", row, out)
		}
	}
}
