package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages that read clusters and hold what was read, and the packages that present it. What
// reads never depends on what presents: status, diagnose and the commands take what pkg/member
// read (pkg/snapshot's types), never the other way round.
var (
	readingPackages    = []string{"member", "snapshot", "clusterset", "decode", "mcsapi", "crdschema", "about"}
	presentingPackages = []string{"status", "printers", "diagnose", "cmd"}
)

// TestReadingDoesNotImportPresenting fails when a reading package depends, directly or not, on a
// presenting package (pkg/cmd and every command below it included).
func TestReadingDoesNotImportPresenting(t *testing.T) {
	const module = "github.com/kubectl-mcs/kubectl-mcs/pkg/"
	var args []string
	for _, p := range readingPackages {
		args = append(args, module+p)
	}
	// go test puts its own toolchain first on PATH.
	out, err := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(readingPackages) {
		t.Fatalf("go list gave %d packages, want the %d reading ones:\n%s", len(lines), len(readingPackages), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			if p, ok := presenting(strings.TrimPrefix(dep, module), dep); ok {
				t.Errorf("%s depends on the presenting package %s: move what both need beside what was read (pkg/snapshot)", fields[0], p)
			}
		}
	}
}

// presenting says whether rel (a path below pkg/, or dep itself when outside it) is a presenting
// package or below one, and returns dep for the message.
func presenting(rel, dep string) (string, bool) {
	if rel == dep {
		return "", false
	}
	for _, p := range presentingPackages {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return dep, true
		}
	}
	return "", false
}

// TestPresentingIsRecognised keeps the rule from passing vacuously: the package names above must
// still exist and be what presenting matches.
func TestPresentingIsRecognised(t *testing.T) {
	const module = "github.com/kubectl-mcs/kubectl-mcs/pkg/"
	for _, dep := range []string{module + "status", module + "printers", module + "diagnose", module + "cmd", module + "cmd/statuscmd"} {
		if _, ok := presenting(strings.TrimPrefix(dep, module), dep); !ok {
			t.Errorf("%s is not taken as presenting", dep)
		}
	}
	for _, dep := range []string{module + "snapshot", module + "statusx", "k8s.io/kubectl/pkg/cmd", module + "sync/engine"} {
		if _, ok := presenting(strings.TrimPrefix(dep, module), dep); ok {
			t.Errorf("%s is taken as presenting", dep)
		}
	}
	var args []string
	for _, p := range append(append([]string{}, readingPackages...), presentingPackages...) {
		args = append(args, module+p)
	}
	if out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput(); err != nil {
		t.Errorf("a package named by the rule is gone (rename it here too): %v\n%s", err, out)
	}
}
