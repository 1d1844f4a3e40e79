// Package makefile tests what make and the test bed's build scripts print and how often they build
// the image, on a copy of the repository with a stand-in go on PATH: nothing is compiled (go list,
// version and env are the real go's), and the scripts run in their plan mode (test/testbed/steps.sh).
package makefile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeGo logs every go build and go run ./hack/image to $GO_LOG and writes their outputs; go list,
// version and env go to the real go; anything else (a build of the test bed's binaries) fails.
const fakeGo = `#!/bin/sh
out=
prev=
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
case "$1 $2" in
  "list "*|"version "*|"env "*) exec "$REAL_GO" "$@" ;;
  "run ./hack/image") echo image >>"$GO_LOG"; mkdir -p "$(dirname "$out")"; echo archive >"$out"
    printf 'REF\nsha256:%s\n%s\n' "$(grep -c '^image$' "$GO_LOG")" "$out" ;;
  "run ./hack/dist") echo dist >>"$GO_LOG" ;;
  "build "*) echo build >>"$GO_LOG"; case "$out" in */) mkdir -p "$out" ;; *) mkdir -p "$(dirname "$out")"; : >"$out" ;; esac ;;
  *) echo "go $*: not in this test" >&2; exit 1 ;;
esac
`

type repo struct {
	t              *testing.T
	dir, log, path string
	env            []string
}

// newRepo copies what make and the build scripts read into a temporary directory.
func newRepo(t *testing.T) *repo {
	t.Helper()
	for _, tool := range []string{"make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, dir: t.TempDir()}
	for _, p := range []string{"Makefile", "go.mod", "go.sum", "cmd", "pkg", "hack", "test/testbed", "test/images"} {
		copyTree(t, filepath.Join(src, p), filepath.Join(r.dir, p))
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	r.log = filepath.Join(bin, "go.log")
	r.path = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	// Outside git, SOURCE_DATE_EPOCH would be the time of each make.
	r.env = append(os.Environ(), "REAL_GO="+realGo, "GO_LOG="+r.log, "KUBECTL_MCS_CACHE="+t.TempDir(),
		"SOURCE_DATE_EPOCH=1", "MAKEFLAGS=", "MAKELEVEL=")
	return r
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(to, strings.TrimPrefix(p, from))
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a command in the copy and returns its stdout and stderr together.
func (r *repo) run(env []string, name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.dir, append(append(append([]string{}, r.env...), "PATH="+r.path), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// builds counts the lines of the stand-in go's log that read what.
func (r *repo) builds(what string) int {
	b, _ := os.ReadFile(r.log)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == what {
			n++
		}
	}
	return n
}

var stepLine = regexp.MustCompile(`(?m)^(?:echo ")?(make \w+|testbed-build): \[(\d+)/(\d+)\] (.*) \(about ([^)]+)\)"?$`)

type step struct {
	k, n  int
	what  string
	at    int // offset in the output
	about string
}

func steps(out, prefix string) []step {
	var s []step
	for _, m := range stepLine.FindAllStringSubmatchIndex(out, -1) {
		if out[m[2]:m[3]] != prefix {
			continue
		}
		var k, n int
		fmt.Sscan(out[m[4]:m[5]], &k)
		fmt.Sscan(out[m[6]:m[7]], &n)
		s = append(s, step{k: k, n: n, what: out[m[8]:m[9]], at: m[0], about: out[m[10]:m[11]]})
	}
	return s
}

// checkSteps: one line per name, numbered 1..N in order, each before the command that starts it.
func checkSteps(t *testing.T, out, prefix string, names, starts []string) {
	t.Helper()
	got := steps(out, prefix)
	if len(got) != len(names) {
		t.Fatalf("%s: want %d step lines, got %d:\n%s", prefix, len(names), len(got), out)
	}
	for i, s := range got {
		if s.k != i+1 || s.n != len(names) || !strings.HasPrefix(s.what, names[i]) {
			t.Errorf("%s: line %d: want [%d/%d] %s: ..., got [%d/%d] %s", prefix, i+1, i+1, len(names), names[i], s.k, s.n, s.what)
		}
		if !regexp.MustCompile(`^\d+ (s|min)\b`).MatchString(s.about) {
			t.Errorf("%s: %s: the expected duration %q is not a figure", prefix, names[i], s.about)
		}
		if j := strings.Index(out[s.at:], starts[i]); j < 0 {
			t.Errorf("%s: %s: %q does not follow its step line", prefix, names[i], starts[i])
		} else if i+1 < len(got) && s.at+j > got[i+1].at {
			t.Errorf("%s: %s: %q comes after the next step's line", prefix, names[i], starts[i])
		}
	}
}

func TestMakeDemoSaysWhereItIs(t *testing.T) {
	r := newRepo(t)
	out := r.run(nil, "make", "-n", "demo")
	checkSteps(t, out, "make demo", []string{"build:", "testbed-build:", "testbed-up:", "demo:"},
		[]string{"go build", "test/testbed/node.sh check", "test/testbed/testbed.sh up", "hack/demo.sh"})
}

func TestMakeTestSaysWhereItIs(t *testing.T) {
	r := newRepo(t)
	// make -n runs the lines that call make; test-production keeps its test on a line of its own.
	out := r.run(nil, "make", "-n", "test")
	targets := []string{"test-unit:", "test-krew:", "test-e2e:", "test-traffic:", "test-production:", "test-karmada:", "test-image:", "conformance:"}
	starts := []string{"go vet", "hack/dist archive", "./test/e2e ./pkg", "TRAFFIC_KUBECONFIG=", "TRAFFIC_MODE=production",
		"^TestKarmadaReal", "-tags image", "test/conformance/run.sh"}
	checkSteps(t, out, "make test", targets, starts)
	if r.builds("image")+r.builds("build") != 0 {
		t.Errorf("make -n test built something")
	}
}

// The image make test needs three times (make dist for test-krew, test-production, test-image) is
// built once, and again only when a source changes; test-production's second version of it is
// built beside it, not over it.
func TestImageBuiltOnce(t *testing.T) {
	r := newRepo(t)
	r.run(nil, "make", "dist")
	if n := r.builds("image"); n != 1 {
		t.Fatalf("make dist: %d image builds, want 1", n)
	}
	first := r.run(nil, "make", "image")
	next := filepath.Join(t.TempDir(), "next.tar")
	r.run(nil, "make", "image", "VERSION=v0.0.0-next", "PLATFORMS=linux/amd64", "IMAGE_ARCHIVE="+next)
	again := r.run(nil, "make", "image")
	if n := r.builds("image"); n != 2 {
		t.Fatalf("make dist, image, image (next version), image: %d image builds, want 2 (the next version's only)", n)
	}
	if _, err := os.Stat(next); err != nil {
		t.Errorf("the next version's archive: %v", err)
	}
	last3 := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		return strings.Join(l[max(0, len(l)-3):], "\n")
	}
	if want := "REF\nsha256:1\ndist/image/kubectl-mcs.tar"; last3(first) != want || last3(again) != want {
		t.Errorf("an image already built must print its reference, digest and archive last:\n%s\n--\n%s", first, again)
	}
	f := filepath.Join(r.dir, "pkg", "version", "version.go")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(b, "\n// changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	r.run(nil, "make", "image")
	if n := r.builds("image"); n != 3 {
		t.Errorf("make image after a source changed: %d image builds in all, want 3", n)
	}
}

// A build from nothing says each of its phases, in order; a build with nothing to do says nothing.
func TestTestbedBuildSaysWhereItIs(t *testing.T) {
	r := newRepo(t)
	plan := []string{"TESTBED_BUILD_PLAN=1"}
	out := r.run(plan, "bash", "test/testbed/build.sh")
	checkSteps(t, out, "testbed-build", []string{"building kwok", "building kube-apiserver"}, []string{"", ""})

	cache := t.TempDir()
	for _, f := range []string{"kwok-v0.8.0/kwok", "kwok-v0.8.0/kwokctl", "etcd-v3.6.5", "coredns-v1.15.0/coredns",
		"k8s-v1.36.3/kube-apiserver", "k8s-v1.36.3/kube-controller-manager", "k8s-v1.36.3/kube-scheduler"} {
		p := filepath.Join(cache, "bin", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out := r.run(append(plan, "KUBECTL_MCS_CACHE="+cache), "bash", "test/testbed/build.sh"); strings.Contains(out, "testbed-build:") {
		t.Errorf("a build with nothing to do printed:\n%s", out)
	}

	if why, err := exec.Command("bash", filepath.Join(r.dir, "test/testbed/node.sh"), "check").CombinedOutput(); err != nil {
		t.Skipf("the real-node build's phases: %s", strings.TrimSpace(string(why)))
	}
	// Every package missing, as on a fresh machine: dpkg-query says so, and the plan installs nothing.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "dpkg-query"), []byte("#!/bin/sh\necho 'unknown ok not-installed'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.path = bin + string(os.PathListSeparator) + r.path
	out = r.run(plan, "bash", "test/testbed/node.sh", "build")
	checkSteps(t, out, "testbed-build", []string{"installing containerd", "building the test images", "building kwok", "building kube-apiserver"},
		[]string{"", "", "", ""})
	if !strings.Contains(out, "kubelet, kube-proxy") {
		t.Errorf("kubelet and kube-proxy are not built with the control plane:\n%s", out)
	}
}
