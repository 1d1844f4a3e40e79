package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// --profile writes a pprof file (gzip-compressed protobuf) when the command ends.
func TestProfileFlags(t *testing.T) {
	for _, kind := range []string{"cpu", "heap", "goroutine"} {
		out := filepath.Join(t.TempDir(), kind+".pprof")
		root := NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
		root.SetArgs([]string{"version", "--profile", kind, "--profile-output", out})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Errorf("%s: %d bytes (%v), want a gzip-compressed profile", kind, len(data), err)
		}
	}
	root := NewCmdMCS(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	root.SetArgs([]string{"version", "--profile", "nonsense"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `no profile "nonsense"`) {
		t.Errorf("an unknown profile: %v", err)
	}
}
