//go:build krew

// Package krew tests the release as a user gets it: the archives and krew manifest of `make dist`
// validated and installed by krew itself, the plugin run through kubectl's plugin lookup, its
// completion through kubectl's plugin completion. Run by `make test-krew`, which builds krew and
// validate-krew-manifest and sets:
//
//	KREW_BIN      directory holding kubectl-krew and validate-krew-manifest
//	DIST_DIR      the output of make dist
//	DIST_VERSION  the version make dist stamped
package krew

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/internal/archives"
	"github.com/kubectl-mcs/kubectl-mcs/internal/krewmanifest"
)

// maxBinaryBytes bounds each platform's binary (35-38 MB when this was written).
const maxBinaryBytes = 48e6

var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

type env struct {
	krewBin, dist, version string
	kubectl                string
}

func setup(t *testing.T) env {
	t.Helper()
	e := env{krewBin: os.Getenv("KREW_BIN"), dist: os.Getenv("DIST_DIR"), version: os.Getenv("DIST_VERSION")}
	if e.krewBin == "" || e.dist == "" || e.version == "" {
		t.Fatal("KREW_BIN, DIST_DIR and DIST_VERSION must be set: run make test-krew")
	}
	for _, b := range []string{"kubectl-krew", "validate-krew-manifest"} {
		if _, err := os.Stat(filepath.Join(e.krewBin, b)); err != nil {
			t.Fatalf("KREW_BIN: %v", err)
		}
	}
	var err error
	if e.kubectl, err = exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is required: %v", err)
	}
	return e
}

// path is a PATH that holds kubectl, krew and dirs, and nothing else that could hold another
// kubectl-mcs.
func (e env) path(dirs ...string) string {
	return strings.Join(append(dirs, e.krewBin, filepath.Dir(e.kubectl), "/usr/bin", "/bin"), string(os.PathListSeparator))
}

// run runs a command with exactly the environment given, fails the test with its output if it
// fails, and returns its combined output.
func run(t *testing.T, environ []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(environ, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// readmeLine returns line, failing the test unless README.md holds it: the commands the test runs
// are the ones users are told to run.
func readmeLine(t *testing.T, line string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), line+"\n") {
		t.Fatalf("README.md does not say %q", line)
	}
	return line
}

// complete runs a completion request and returns its standard output: the candidates and the
// directive (cobra's debug lines go to standard error).
func complete(t *testing.T, environ []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = environ
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s%s", name, args, err, out, stderr.String())
	}
	return string(out)
}

func runErr(environ []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = environ
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	if testing.Verbose() {
		os.Stderr.WriteString("    $ " + name + " " + strings.Join(args, " ") + " (" + time.Since(start).Round(time.Millisecond).String() + ")\n")
	}
	return buf.String(), err
}

func readManifest(t *testing.T, path string) krewmanifest.Plugin {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m krewmanifest.Plugin
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func archiveFor(e env, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return "kubectl-mcs_" + e.version + "_" + goos + "_" + goarch + ext
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestDistManifest checks dist/mcs.yaml against the archives, and with validate-krew-manifest.
func TestDistManifest(t *testing.T) {
	e := setup(t)
	path := filepath.Join(e.dist, "mcs.yaml")
	m := readManifest(t, path)
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "mcs" {
		t.Errorf("apiVersion/kind/name: %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	if m.Spec.Version != e.version || !strings.HasPrefix(m.Spec.Version, "v") {
		t.Errorf("spec.version %q, want %q", m.Spec.Version, e.version)
	}
	if m.Spec.Homepage != "https://github.com/kubectl-mcs/kubectl-mcs" {
		t.Errorf("homepage %q", m.Spec.Homepage)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || !strings.Contains(m.Spec.Caveats, "kubectl_complete-mcs") {
		t.Errorf("shortDescription, description or caveats missing")
	}
	var got []string
	for _, p := range m.Spec.Platforms {
		goos, goarch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		got = append(got, goos+"/"+goarch)
		name := archiveFor(e, goos, goarch)
		if !strings.HasSuffix(p.URI, "/"+name) {
			t.Errorf("%s/%s: uri %q does not name %s", goos, goarch, p.URI, name)
		}
		if sum := sha256File(t, filepath.Join(e.dist, name)); p.SHA256 != sum {
			t.Errorf("%s/%s: sha256 %q, the archive's is %q", goos, goarch, p.SHA256, sum)
		}
		bin, script := "kubectl-mcs", "kubectl_complete-mcs"
		if goos == "windows" {
			bin, script = bin+".exe", script+".cmd"
		}
		if p.Bin != bin {
			t.Errorf("%s/%s: bin %q, want %q", goos, goarch, p.Bin, bin)
		}
		entries, err := archives.Entries(filepath.Join(e.dist, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{bin, script, "LICENSE", "README.md"} {
			if _, ok := entries[f]; !ok {
				t.Errorf("%s: no %s in %v", name, f, entries)
			}
		}
		for _, f := range []string{bin, script} {
			if fi, ok := entries[f]; ok && fi.Mode()&0o111 == 0 {
				t.Errorf("%s: %s not executable: %v", name, f, fi.Mode())
			}
		}
		st, _ := os.Stat(filepath.Join(e.dist, name))
		binSize := int64(0)
		if fi, ok := entries[bin]; ok {
			binSize = fi.Size()
		}
		t.Logf("%s: %.1f MB, %s %.1f MB", name, float64(st.Size())/1e6, bin, float64(binSize)/1e6)
		// A code path that reaches text/template (kubectl's go-template printer, say) turns off
		// the linker's dead-method elimination and nearly doubles the binary: about 36 MB -> 64 MB.
		if binSize > maxBinaryBytes {
			t.Errorf("%s: %s is %.1f MB, over %.0f MB: did something link text/template's Execute or reflect's MethodByName?",
				name, bin, float64(binSize)/1e6, maxBinaryBytes/1e6)
		}
	}
	slices.Sort(got)
	want := slices.Clone(platforms)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("platforms %v, want %v", got, want)
	}
	out := run(t, []string{"PATH=" + e.path(), "HOME=" + t.TempDir()},
		filepath.Join(e.krewBin, "validate-krew-manifest"), "-manifest", path, "-skip-install")
	if !strings.Contains(out, "structural validation OK") || !strings.Contains(out, "no overlapping spec.platform[].selector") {
		t.Errorf("validate-krew-manifest -skip-install: unexpected output:\n%s", out)
	}
}

// serveDist serves the dist directory on 127.0.0.1 and counts the requests per file.
func serveDist(t *testing.T, dir string) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	hits := map[string]int{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[strings.TrimPrefix(r.URL.Path, "/")]++
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(hits)
	}
}

// TestValidateAndInstallEveryPlatform renders the manifest against the archives served over HTTP
// and lets validate-krew-manifest install every platform from there (kubectl krew install
// --manifest with KREW_OS/KREW_ARCH set, and a check for the LICENSE).
func TestValidateAndInstallEveryPlatform(t *testing.T) {
	e := setup(t)
	srv, hits := serveDist(t, e.dist)
	tmp := t.TempDir()
	local := filepath.Join(tmp, "mcs.yaml")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goEnv := append(os.Environ(), "GOFLAGS=-buildvcs=false")
	cmd := exec.Command("go", "run", "./hack/dist", "manifest", "-version", e.version, "-base-url", srv.URL, "-dir", e.dist, "-o", local)
	cmd.Dir, cmd.Env = repo, goEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rendering the manifest for %s: %v\n%s", srv.URL, err, out)
	}
	remote, served := readManifest(t, filepath.Join(e.dist, "mcs.yaml")), readManifest(t, local)
	if len(served.Spec.Platforms) != len(platforms) {
		t.Fatalf("%d platforms in the served manifest", len(served.Spec.Platforms))
	}
	for i, p := range served.Spec.Platforms {
		if !strings.HasPrefix(p.URI, srv.URL+"/") || p.SHA256 != remote.Spec.Platforms[i].SHA256 {
			t.Errorf("platform %d: %s %s, want under %s with sha256 %s", i, p.URI, p.SHA256, srv.URL, remote.Spec.Platforms[i].SHA256)
		}
	}
	start := time.Now()
	out := run(t, []string{"PATH=" + e.path(), "HOME=" + tmp},
		filepath.Join(e.krewBin, "validate-krew-manifest"), "-manifest", local)
	t.Logf("validate-krew-manifest with install check: %s", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out, "all 6 spec.platforms installed fine") {
		t.Fatalf("validate-krew-manifest: no \"all 6 spec.platforms installed fine\":\n%s", out)
	}
	got := hits()
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		if name := archiveFor(e, goos, goarch); got[name] == 0 {
			t.Errorf("%s was never downloaded (requests: %v)", name, got)
		}
	}
}

// TestKrewInstall installs the plugin the way the README says, runs it through kubectl, completes
// it through kubectl, and uninstalls it.
func TestKrewInstall(t *testing.T) {
	e := setup(t)
	tmp := t.TempDir()
	root := filepath.Join(tmp, "krew")
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: member1
  context: {cluster: nowhere, user: u}
- name: member2
  context: {cluster: nowhere, user: u}
- name: karmada-apiserver
  context: {cluster: nowhere, user: u}
current-context: member1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	userBin := filepath.Join(tmp, ".local", "bin") // the user's own directory on PATH
	environ := []string{
		"PATH=" + e.path(filepath.Join(root, "bin"), userBin),
		"HOME=" + tmp, "KREW_ROOT=" + root, "KREW_NO_UPGRADE_CHECK=1", "KUBECONFIG=" + kubeconfig,
	}
	archive := filepath.Join(e.dist, archiveFor(e, runtime.GOOS, runtime.GOARCH))
	manifestPath := filepath.Join(e.dist, "mcs.yaml")

	install := func() {
		out := run(t, environ, e.kubectl, "krew", "install", "--manifest="+manifestPath, "--archive="+archive)
		if !strings.Contains(out, `Installed plugin: mcs`) {
			t.Fatalf("kubectl krew install: no \"Installed plugin: mcs\":\n%s", out)
		}
		if !strings.Contains(out, "kubectl_complete-mcs") {
			t.Errorf("kubectl krew install: caveats not shown:\n%s", out)
		}
	}
	install()
	if _, err := os.Lstat(filepath.Join(root, "bin", "kubectl-mcs")); err != nil {
		t.Fatalf("no kubectl-mcs in KREW_ROOT/bin: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "receipts", "mcs.yaml")); err != nil {
		t.Errorf("no krew receipt for mcs: %v", err)
	}
	// krew's list and uninstall want the plugin index that "kubectl krew update" clones from the
	// network on a user's machine; an empty local one stands in for it.
	if err := os.MkdirAll(filepath.Join(root, "index", "default", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A plugin installed from a manifest belongs to no index: krew lists it as detached/mcs.
	if out := run(t, environ, e.kubectl, "krew", "list"); !hasLine(out, "detached/mcs") {
		t.Errorf("kubectl krew list: no detached/mcs:\n%s", out)
	}

	t.Run("kubectl mcs version", func(t *testing.T) {
		out := run(t, environ, e.kubectl, "mcs", "version", "-o", "json")
		var info struct{ Version, Platform string }
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			t.Fatalf("kubectl mcs version -o json: %v\n%s", err, out)
		}
		if info.Version != e.version || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("kubectl mcs version: %+v, want version %s on %s/%s", info, e.version, runtime.GOOS, runtime.GOARCH)
		}
		out = run(t, environ, e.kubectl, "plugin", "list")
		if !strings.Contains(out, filepath.Join(root, "bin", "kubectl-mcs")) {
			t.Errorf("kubectl plugin list: krew's kubectl-mcs not found:\n%s", out)
		}
		out = run(t, environ, e.kubectl, "mcs", "--help")
		if !strings.Contains(out, "kubectl mcs [command]") || !hasLine(out, "completion") {
			t.Errorf("kubectl mcs --help: no usage line or completion command:\n%s", out)
		}
	})

	t.Run("completion through kubectl", func(t *testing.T) {
		// The README's (and the caveats') step: kubectl_complete-mcs from the krew store into a
		// directory on PATH. Not krew's bin: krew refuses to run when that holds files but no
		// receipts.
		if err := os.MkdirAll(userBin, 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, environ, "sh", "-c", readmeLine(t, `install -m 0755 "${KREW_ROOT:-$HOME/.krew}"/store/mcs/*/kubectl_complete-mcs ~/.local/bin/`))
		script := filepath.Join(userBin, "kubectl_complete-mcs")
		// The README's script for go install users is the same two lines.
		goHome := t.TempDir()
		goEnv := append(slices.Clone(environ), "HOME="+goHome)
		if err := os.MkdirAll(filepath.Join(goHome, ".local", "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, goEnv, "sh", "-c", readmeLine(t, `printf '#!/bin/sh\nexec kubectl mcs __complete "$@"\n' > ~/.local/bin/kubectl_complete-mcs`)+
			" && "+readmeLine(t, "chmod +x ~/.local/bin/kubectl_complete-mcs"))
		if got := candidates(complete(t, goEnv, filepath.Join(goHome, ".local", "bin", "kubectl_complete-mcs"), "sync", "--contexts=")); !slices.Equal(got, []string{"karmada-apiserver", "member1", "member2"}) {
			t.Errorf("the README's kubectl_complete-mcs for go install: got %q", got)
		}
		for _, c := range []struct {
			args []string // after "kubectl mcs"; the last one is the word to complete
			want []string
		}{
			{[]string{""}, []string{"init", "expose", "sync", "install", "status", "diagnose", "dns-server", "unexpose", "uninstall", "version", "completion", "help"}},
			{[]string{"ex"}, []string{"expose"}},
			{[]string{"expose", "--contexts="}, []string{"karmada-apiserver", "member1", "member2"}},
			{[]string{"expose", "--contexts=member1,"}, []string{"member1,karmada-apiserver", "member1,member2"}},
			{[]string{"sync", "--contexts", "member1,m"}, []string{"member1,member2"}},
			{[]string{"expose", "--karmada-context", "k"}, []string{"karmada-apiserver"}},
			{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		} {
			// As the shell asks kubectl, which runs kubectl_complete-mcs ARGS...
			out := complete(t, environ, e.kubectl, append([]string{"__complete", "mcs"}, c.args...)...)
			if got := candidates(out); !slices.Equal(got, c.want) {
				t.Errorf("kubectl __complete mcs %q: got %q, want %q\n%s", c.args, got, c.want, out)
			}
			// ... and as kubectl runs the script.
			out = complete(t, environ, script, c.args...)
			if got := candidates(out); !slices.Equal(got, c.want) {
				t.Errorf("kubectl_complete-mcs %q: got %q, want %q\n%s", c.args, got, c.want, out)
			}
		}
	})

	t.Run("reinstall (the upgrade path of a manifest install) and uninstall", func(t *testing.T) {
		run(t, environ, e.kubectl, "krew", "uninstall", "mcs")
		install()
		run(t, environ, e.kubectl, "mcs", "version")
		run(t, environ, e.kubectl, "krew", "uninstall", "mcs")
		if _, err := os.Lstat(filepath.Join(root, "bin", "kubectl-mcs")); !os.IsNotExist(err) {
			t.Errorf("kubectl-mcs still in KREW_ROOT/bin after uninstall: %v", err)
		}
		if out, err := runErr(environ, e.kubectl, "mcs", "version"); err == nil {
			t.Errorf("kubectl mcs version still works after uninstall:\n%s", out)
		}
	})
}

// candidates returns the completions of a cobra __complete answer, without descriptions; an
// answer that does not end with a directive line (":N") gets "<no directive>" appended.
func candidates(out string) []string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		return append(lines, "<no directive>")
	}
	var got []string
	for _, l := range lines[:len(lines)-1] {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got
}

// hasLine reports whether a line of out starts with word followed by a blank or its end.
func hasLine(out, word string) bool {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == word || strings.HasPrefix(l, word+" ") || strings.HasPrefix(l, word+"\t") {
			return true
		}
	}
	return false
}
