package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The README installs what `make dist` builds, and names no release that no tag defines: the
// VERSION of an archive is git describe's, v0.0.0-g<commit> until a vX.Y.Z tag exists.
func TestReadmeInstallsWhatATagDefines(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	install := readme[strings.Index(readme, "## Install\n"):strings.Index(readme, "## Quick start")]
	out, err := exec.Command("git", "tag", "-l", "v*").Output()
	if err != nil {
		t.Skipf("no git: %v", err)
	}
	tags := strings.Fields(string(out))
	for _, v := range regexp.MustCompile(`\bv\d+\.\d+\.\d+\b`).FindAllString(readme, -1) {
		if v != "v0.0.0" && strings.Contains(install, v) && !strings.Contains(" "+strings.Join(tags, " ")+" ", " "+v+" ") {
			t.Errorf("the README installs %s, which no tag defines (tags: %v)", v, tags)
		}
	}
	for _, want := range []string{"make dist\n", "kubectl krew install --manifest=dist/mcs.yaml --archive=dist/kubectl-mcs_*_linux_amd64.tar.gz\n", "v0.0.0-g<commit>"} {
		if !strings.Contains(install, want) {
			t.Errorf("the README's Install section lacks %q", want)
		}
	}
	if strings.Contains(install, "releases/download") {
		t.Error("the README downloads a release that was never published")
	}
}

// The README stays a page a user reads through: the details live in docs/.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 350 {
		t.Errorf("README.md has %d lines, more than 350: move details to docs/", n)
	}
}
