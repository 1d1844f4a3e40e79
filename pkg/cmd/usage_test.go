package cmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// execute runs Execute as main does and returns what it printed on failure and the exit status.
func execute(t *testing.T, args ...string) (msg string, code int) {
	t.Helper()
	cmdutil.BehaviorOnFatal(func(m string, c int) { msg, code = m, c })
	defer cmdutil.DefaultBehaviorOnFatal()
	root := NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(args)
	Execute(root)
	return msg, code
}

// cobra's usage errors read as kubectl's: "error: ...", then the hint naming the command's help.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want, hint string
	}{
		{[]string{"status", "--bogus"}, "error: unknown flag: --bogus", "kubectl mcs status"},
		{[]string{"status", "a", "b"}, "error: accepts at most 1 arg(s), received 2", "kubectl mcs status"},
		{[]string{"expose"}, "error: give a SERVICE, -l SELECTOR or --all", "kubectl mcs expose"},
		{[]string{"expose", "a", "b"}, "error: accepts at most 1 arg(s), received 2", "kubectl mcs expose"},
		{[]string{"sync", "x"}, `error: unknown command "x" for "kubectl mcs sync"`, "kubectl mcs sync"},
		{[]string{"statu"}, "error: unknown command \"statu\" for \"kubectl mcs\"\n\nDid you mean this?\n\tstatus\n", "kubectl mcs"},
		{[]string{"--bogus"}, "error: unknown flag: --bogus", "kubectl mcs"},
	} {
		msg, code := execute(t, tc.args...)
		if want := tc.want + "\nSee '" + tc.hint + " --help' for usage."; !strings.HasPrefix(msg, want) || code != 1 {
			t.Errorf("%q: exit %d, printed %q; want exit 1 and %q", tc.args, code, msg, want)
		}
	}
	if msg, code := execute(t, "version"); msg != "" || code != 0 {
		t.Errorf("version: exit %d, %q", code, msg)
	}
}

// The top-level help lists the commands in the order of a first hour, with an example.
func TestRootHelp(t *testing.T) {
	var out bytes.Buffer
	root := NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out})
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	last := -1
	for _, c := range []string{"init", "expose", "sync", "install", "status", "diagnose", "unexpose", "version", "completion"} {
		i := strings.Index(help, "\n  "+c+" ")
		if i < last {
			t.Errorf("%s is listed before the command preceding it in a first hour:\n%s", c, help)
		}
		last = i
	}
	if !strings.Contains(help, "Examples:\n  # The first hour") || !strings.Contains(help, "  kubectl mcs sync --contexts=member1,member2\n") {
		t.Errorf("no example:\n%s", help)
	}
}
