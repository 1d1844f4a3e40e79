//go:build image

// Package image runs the image `make image` built as a node would: a containerd of the test's
// own (root, state, socket and configuration under a temporary directory, stopped by PID and
// swept afterwards) imports the archive with `ctr images import` and runs it with `ctr`. Run by
// `make test-image`, which sets:
//
//	IMAGE_ARCHIVE  dist/image/kubectl-mcs.tar
//	IMAGE_REF      the reference make stamped (IMAGE_REPO:VERSION)
//	IMAGE_VERSION  the version make stamped
//
// Where the machine cannot run containers (not root, no containerd, ctr or runc) it skips, saying
// why in one line.
package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distribution/reference"
)

// cannot says why this machine cannot run the test, or "".
func cannot() string {
	if os.Getuid() != 0 {
		return "running containers needs root"
	}
	for _, bin := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed (apt-get install containerd runc, or make testbed-build)"
		}
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return "the image holds linux/amd64 and linux/arm64 only, this is " + runtime.GOARCH
	}
	return ""
}

// containerd is a private containerd and the ctr that talks to it.
type containerd struct {
	t      *testing.T
	dir    string
	cgroup string // the cgroup parent of the containers, under every hierarchy
	cmd    *exec.Cmd
}

func startContainerd(t *testing.T) *containerd {
	dir, err := os.MkdirTemp("", "mcs-image-test-")
	if err != nil {
		t.Fatal(err)
	}
	c := &containerd{t: t, dir: dir, cgroup: fmt.Sprintf("mcs-image-test-%d", os.Getpid())}
	t.Cleanup(c.stop)
	// No CRI: nothing here needs the kubelet's API, its CNI or its sandbox image. runc with
	// cgroupfs (there is no systemd) and the overlayfs snapshotter, as the test bed's nodes have.
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.socket(), c.socket()+".ttrpc", filepath.Join(dir, "opt"))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := c.ctrErr("version"); err == nil {
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Fatalf("containerd did not answer on %s within 30 s:\n%s", c.socket(), lastLines(log, 20))
		}
	}
}

func (c *containerd) socket() string { return filepath.Join(c.dir, "containerd.sock") }

// ctrErr runs ctr in the kubelet's namespace of this containerd.
func (c *containerd) ctrErr(args ...string) (string, error) {
	cmd := exec.Command("ctr", append([]string{"--address", c.socket(), "-n", "k8s.io"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), err
}

func (c *containerd) ctr(args ...string) string {
	c.t.Helper()
	out, err := c.ctrErr(args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// stop removes what is left of the containers, stops containerd by its PID, unmounts what it
// mounted and removes its directory and the containers' cgroups.
func (c *containerd) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		for _, id := range strings.Fields(c.ignore("tasks", "ls", "-q")) {
			c.ignore("tasks", "kill", "-s", "SIGKILL", id)
			c.ignore("tasks", "delete", "-f", id)
		}
		for _, id := range strings.Fields(c.ignore("containers", "ls", "-q")) {
			c.ignore("containers", "delete", id)
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
	}
	for _, m := range mountsUnder(c.dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			c.t.Errorf("unmount %s: %v", m, err)
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		c.t.Errorf("remove %s: %v", c.dir, err)
	}
	for _, h := range cgroupHierarchies() {
		dir := filepath.Join(h, c.cgroup)
		if _, err := os.Stat(dir); err == nil {
			if err := removeCgroup(dir); err != nil {
				c.t.Errorf("cgroup %s: %v", dir, err)
			}
		}
	}
}

func (c *containerd) ignore(args ...string) string { out, _ := c.ctrErr(args...); return out }

// mountsUnder lists the mount points below dir, deepest first.
func mountsUnder(dir string) []string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

func cgroupHierarchies() []string {
	b, _ := os.ReadFile("/proc/self/mounts")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[2] == "cgroup" || f[2] == "cgroup2") {
			out = append(out, f[1])
		}
	}
	return out
}

// removeCgroup removes an empty cgroup and its empty children, deepest first.
func removeCgroup(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeCgroup(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return syscall.Rmdir(dir)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// indexDigest reads the digest of the image index from the archive's index.json.
func indexDigest(t *testing.T, archive string) string {
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no index.json", archive)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "index.json" {
			continue
		}
		var idx struct{ Manifests []struct{ Digest string } }
		if err := json.NewDecoder(tr).Decode(&idx); err != nil || len(idx.Manifests) != 1 {
			t.Fatalf("%s: index.json: %v %+v", archive, err, idx)
		}
		return idx.Manifests[0].Digest
	}
}

func TestImageRuns(t *testing.T) {
	archive, ref, version := os.Getenv("IMAGE_ARCHIVE"), os.Getenv("IMAGE_REF"), os.Getenv("IMAGE_VERSION")
	if archive == "" || ref == "" || version == "" {
		t.Skip("test-image: skipped: IMAGE_ARCHIVE, IMAGE_REF and IMAGE_VERSION are unset: run make test-image")
	}
	if why := cannot(); why != "" {
		t.Skip("test-image: skipped: " + why)
	}
	// The name the kubelet asks its runtime for when a Deployment says image: IMAGE_REF.
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		t.Fatal(err)
	}
	runtimeName := named.String()
	c := startContainerd(t)

	start := time.Now()
	out := c.ctr("images", "import", archive)
	t.Logf("ctr images import %s (%v):\n%s", archive, time.Since(start).Round(time.Millisecond), out)
	var digest string
	for _, line := range strings.Split(c.ctr("images", "ls"), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == runtimeName {
			digest = f[2]
		}
	}
	if want := indexDigest(t, archive); digest != want {
		t.Fatalf("after import, image %s has digest %q, want the archive's index %s:\n%s", runtimeName, digest, want, c.ctr("images", "ls"))
	}

	// Every platform, as ctr images import --all-platforms takes it: the same image, both.
	c.ctr("images", "import", "--all-platforms", archive)
	if ls := c.ctr("images", "ls"); !strings.Contains(ls, "linux/amd64,linux/arm64") {
		t.Errorf("after import --all-platforms:\n%s", ls)
	}

	// The container as the image defines it: run to its end and kept, to read its spec. The
	// entrypoint alone prints the usage and exits 0; it ran as 65532:65532.
	cg := func(id string) string { return "/" + c.cgroup + "/" + id }
	if out, err := c.ctrErr("run", "--cgroup", cg("default"), runtimeName, "default"); err != nil || !strings.Contains(out, "kubectl mcs") {
		t.Errorf("the entrypoint alone: %v\n%s", err, out)
	}
	var info struct {
		Spec struct {
			Process struct {
				User struct{ UID, GID uint32 }
				Args []string
			}
		}
	}
	if err := json.Unmarshal([]byte(c.ctr("containers", "info", "default")), &info); err != nil {
		t.Fatal(err)
	}
	p := info.Spec.Process
	if p.User.UID != 65532 || p.User.GID != 65532 || !slices.Equal(p.Args, []string{"/kubectl-mcs"}) {
		t.Errorf("the image's container ran %q as %d:%d, want /kubectl-mcs as 65532:65532", p.Args, p.User.UID, p.User.GID)
	}
	c.ctr("containers", "delete", "default")

	// kubectl-mcs version, run as a node would: the image's user, a read-only root.
	start = time.Now()
	out, err = c.ctrErr("run", "--rm", "--read-only", "--cgroup", cg("version"), runtimeName, "version", "/kubectl-mcs", "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ctr run --rm %s version (%v):\n%s", runtimeName, time.Since(start).Round(time.Millisecond), out)
	var v struct{ Version, Image, Platform string }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kubectl-mcs version -o json: %v\n%s", err, out)
	}
	if v.Version != version || v.Image != ref || v.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("in the image: version %q, image %q, platform %q; want %q, %q, linux/%s", v.Version, v.Image, v.Platform, version, ref, runtime.GOARCH)
	}
}
