package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCommandsAreIndependent fails when a command package depends, directly or not, on another
// command package: what two commands share lives below pkg/cmd (apply, export, printers,
// clusterset, ...). Only this package, which wires the tree, imports them all.
func TestCommandsAreIndependent(t *testing.T) {
	const root = "github.com/kubectl-mcs/kubectl-mcs/pkg/cmd"
	// go test puts its own toolchain first on PATH.
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, root+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	commands := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if pkg == root {
			continue
		}
		commands++
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, root+"/") && dep != pkg && !strings.HasPrefix(dep, pkg+"/") {
				t.Errorf("%s depends on the command package %s: move what they share out of pkg/cmd", pkg, dep)
			}
		}
	}
	if commands < 7 {
		t.Errorf("go list found %d command packages below %s, want every command's:\n%s", commands, root, out)
	}
}
