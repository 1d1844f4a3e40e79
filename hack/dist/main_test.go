package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/internal/archives"
	"github.com/kubectl-mcs/kubectl-mcs/internal/krewmanifest"
)

var allPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// fakeBins writes a stand-in binary per platform, as make dist's builds would.
func fakeBins(t *testing.T, platforms []string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		exe := binName
		if goos == "windows" {
			exe += ".exe"
		}
		path := filepath.Join(dir, goos+"_"+goarch, exe)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("binary for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestArchiveAndManifest(t *testing.T) {
	const version = "v1.2.3-rc.1"
	bins := fakeBins(t, allPlatforms)
	out := t.TempDir()
	args := []string{"-version", version, "-platforms", strings.Join(allPlatforms, ","), "-bin-dir", bins, "-out", out, "-root", "../..", "-mtime", "1700000000"}
	if err := archiveCmd(args); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(out, archiveName(version, "linux", "amd64")))
	if err != nil {
		t.Fatal(err)
	}
	if err := archiveCmd(args); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(out, archiveName(version, "linux", "amd64"))); string(again) != string(first) {
		t.Error("archives are not reproducible")
	}

	entries, err := archives.Entries(filepath.Join(out, archiveName(version, "darwin", "arm64")))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]fs.FileMode{}
	for name, fi := range entries {
		got[name] = fi.Mode()
	}
	want := map[string]fs.FileMode{binName: 0o755, completionName: 0o755, "LICENSE": 0o644, "README.md": 0o644}
	if len(got) != len(want) {
		t.Errorf("darwin/arm64 archive: %v, want %v", got, want)
	}
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("darwin/arm64 archive: %s mode %o, want %o (%v)", name, got[name], mode, got)
		}
	}
	zipped, err := archives.Entries(filepath.Join(out, archiveName(version, "windows", "amd64")))
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(zipped))
	if !slices.Equal(names, []string{"LICENSE", "README.md", binName + ".exe", completionName + ".cmd"}) {
		t.Errorf("windows/amd64 archive: %v", names)
	}

	manifest := filepath.Join(out, "mcs.yaml")
	if err := manifestCmd([]string{"-version", version, "-base-url", "http://127.0.0.1:8080/dl/", "-dir", out, "-template", "../../krew-manifest.yaml", "-o", manifest}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var p krewmanifest.Plugin
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "mcs" || p.Spec.Version != version {
		t.Errorf("manifest header: %+v", p)
	}
	if len(p.Spec.Platforms) != len(allPlatforms) {
		t.Fatalf("%d platforms", len(p.Spec.Platforms))
	}
	for _, pl := range p.Spec.Platforms {
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		name := archiveName(version, goos, goarch)
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if pl.URI != "http://127.0.0.1:8080/dl/"+name || pl.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s/%s: %s %s", goos, goarch, pl.URI, pl.SHA256)
		}
	}
}

func TestManifestRefusals(t *testing.T) {
	const version = "v0.0.0-g0123abc"
	out := t.TempDir()
	if err := archiveCmd([]string{"-version", version, "-platforms", "linux/amd64,linux/arm64", "-bin-dir", fakeBins(t, []string{"linux/amd64", "linux/arm64"}), "-out", out, "-root", "../.."}); err != nil {
		t.Fatal(err)
	}
	render := func(name string) error {
		return manifestCmd([]string{"-version", version, "-base-url", "http://x", "-dir", out, "-template", "../../krew-manifest.yaml", "-o", filepath.Join(out, name)})
	}
	if err := render("mcs.yaml"); err == nil || !strings.Contains(err.Error(), "no archive for darwin/amd64") {
		t.Errorf("missing platforms: got %v", err)
	}
	// Every platform of the template, plus one it does not list.
	if err := archiveCmd([]string{"-version", version, "-platforms", strings.Join(append(slices.Clone(allPlatforms), "linux/386"), ","), "-bin-dir", fakeBins(t, append(slices.Clone(allPlatforms), "linux/386")), "-out", out, "-root", "../.."}); err != nil {
		t.Fatal(err)
	}
	if err := render("mcs.yaml"); err == nil || !strings.Contains(err.Error(), "not listed in the template: "+archiveName(version, "linux", "386")) {
		t.Errorf("unlisted archive: got %v", err)
	}
	if err := os.Remove(filepath.Join(out, archiveName(version, "linux", "386"))); err != nil {
		t.Fatal(err)
	}
	if err := render("plugin.yaml"); err == nil || !strings.Contains(err.Error(), "named mcs.yaml") {
		t.Errorf("wrong file name: got %v", err)
	}
	if err := render("mcs.yaml"); err != nil {
		t.Errorf("complete set: %v", err)
	}
	if err := archiveCmd([]string{"-version", "1.0.0", "-platforms", "linux/amd64"}); err == nil {
		t.Error("version without v accepted")
	}
}
