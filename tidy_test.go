// Package kubectlmcs_test holds the checks of the module as a whole.
package kubectlmcs_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGoModTidy fails when `go mod tidy` would change go.mod or go.sum: a dependency imported
// directly but marked indirect, or one no longer used.
func TestGoModTidy(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	// go test puts its own toolchain first on PATH; -diff (Go 1.23) prints, and writes nothing.
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if len(out) > 0 {
		t.Fatalf("go mod tidy would change the module (run it):\n%s", out)
	}
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v\n%s", err, stderr.String())
	}
}
