package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

var platforms = []string{"linux/amd64", "linux/arm64"}

// fakeBins writes bin-dir/OS_ARCH/kubectl-mcs for each platform, its content naming it.
func fakeBins(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range platforms {
		f := filepath.Join(dir, strings.ReplaceAll(p, "/", "_"), binName)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("binary for "+p+extra), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// makeImage runs the command as make does and returns its three lines and the archive's bytes.
func makeImage(t *testing.T, binDir string, mtime string, extra ...string) ([]string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "image", "kubectl-mcs.tar")
	var stdout bytes.Buffer
	args := append([]string{"-ref", "kubectl-mcs/kubectl-mcs:v1.2.3", "-version", "v1.2.3", "-revision", "0123abc",
		"-platforms", strings.Join(platforms, ","), "-bin-dir", binDir, "-o", out, "-mtime", mtime}, extra...)
	if err := run(args, &stdout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "kubectl-mcs/kubectl-mcs:v1.2.3" || !strings.HasPrefix(lines[1], "sha256:") || lines[2] != out {
		t.Fatalf("printed %q, want the reference, the digest and %s", lines, out)
	}
	return lines, b
}

func TestReproducible(t *testing.T) {
	bins := fakeBins(t, "")
	first, a := makeImage(t, bins, "1700000000")
	second, b := makeImage(t, bins, "1700000000")
	if first[1] != second[1] || !bytes.Equal(a, b) {
		t.Errorf("two builds of the same inputs: digests %s and %s, archives equal: %v", first[1], second[1], bytes.Equal(a, b))
	}
	if later, _ := makeImage(t, bins, "1700000001"); later[1] == first[1] {
		t.Error("another SOURCE_DATE_EPOCH gave the same digest")
	}
	if other, _ := makeImage(t, fakeBins(t, " changed"), "1700000000"); other[1] == first[1] {
		t.Error("another binary gave the same digest")
	}
}

// eachEntry calls fn with every entry of a tar and its contents.
func eachEntry(t *testing.T, r io.Reader, fn func(h *tar.Header, data []byte)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		fn(h, b)
	}
}

// extract unpacks the archive as skopeo's oci-archive: does, into a directory read as a layout.
func extract(t *testing.T, archive []byte) string {
	t.Helper()
	dir := t.TempDir()
	eachEntry(t, bytes.NewReader(archive), func(h *tar.Header, b []byte) {
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		var err error
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
	return dir
}

func TestArchiveIsOCILayout(t *testing.T) {
	bins := fakeBins(t, "")
	lines, archive := makeImage(t, bins, "1700000000")
	top, err := layout.ImageIndexFromPath(extract(t, archive))
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest.String() != lines[1] || !m.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("index.json %+v: want one image index, %s", m.Manifests, lines[1])
	}
	// What ctr images import names the image: the reference as the kubelet resolves it.
	want, _ := parseRef("kubectl-mcs/kubectl-mcs:v1.2.3")
	if a := m.Manifests[0].Annotations; a[annotationContainerdName] != want.String() || a[annotationRefName] != "v1.2.3" ||
		!strings.HasSuffix(want.String(), "/kubectl-mcs/kubectl-mcs:v1.2.3") {
		t.Errorf("annotations %v, want %s named %s", a, annotationContainerdName, want)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the index does not hold together: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range im.Manifests {
		got = append(got, d.Platform.OS+"/"+d.Platform.Architecture)
		if d.ArtifactType != "" || !d.MediaType.IsImage() {
			t.Errorf("%s: media type %s, artifactType %q: want a plain image", d.Platform, d.MediaType, d.ArtifactType)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, d.Platform, bins)
	}
	if !slices.Equal(got, platforms) {
		t.Errorf("platforms %v, want %v", got, platforms)
	}
}

func checkImage(t *testing.T, img v1.Image, p *v1.Platform, bins string) {
	t.Helper()
	created := time.Unix(1700000000, 0).UTC()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != p.OS || cf.Architecture != p.Architecture || c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/kubectl-mcs"}) || len(c.Cmd) != 0 {
		t.Errorf("%s: config %s/%s user %q entrypoint %q cmd %q", p, cf.OS, cf.Architecture, c.User, c.Entrypoint, c.Cmd)
	}
	if c.Labels["org.opencontainers.image.version"] != "v1.2.3" || c.Labels["org.opencontainers.image.revision"] != "0123abc" {
		t.Errorf("%s: labels %v", p, c.Labels)
	}
	if !cf.Created.Equal(created) || len(cf.History) != 1 || !cf.History[0].Created.Equal(created) {
		t.Errorf("%s: created %v, history %+v, want every time %v", p, cf.Created, cf.History, created)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: layers %d, %v", p, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	contents := map[string]string{}
	eachEntry(t, rc, func(h *tar.Header, b []byte) {
		files[h.Name], contents[h.Name] = h, string(b)
		if !h.ModTime.Equal(created) {
			t.Errorf("%s: %s modified %v, want %v", p, h.Name, h.ModTime, created)
		}
		// Everything is root's but the user's own home.
		if owner := [2]int{h.Uid, h.Gid}; owner != [2]int{0, 0} && (h.Name != "home/nonroot/" || owner != [2]int{65532, 65532}) {
			t.Errorf("%s: %s owned by %d:%d", p, h.Name, h.Uid, h.Gid)
		}
	})
	bin, _ := os.ReadFile(filepath.Join(bins, p.OS+"_"+p.Architecture, binName))
	if h := files[binName]; h == nil || h.Mode != 0o755 || h.Typeflag != tar.TypeReg || contents[binName] != string(bin) {
		t.Errorf("%s: /kubectl-mcs %+v, content %q", p, h, contents[binName])
	}
	if !strings.Contains(contents["etc/passwd"], "nonroot:x:65532:65532:") || !strings.Contains(contents["etc/group"], "nonroot:x:65532:") {
		t.Errorf("%s: passwd %q group %q", p, contents["etc/passwd"], contents["etc/group"])
	}
	if h := files["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("%s: /tmp %+v", p, h)
	}
}

// TestPush pushes the layout to a registry as `crane push DIR REF` does (its only index, by
// digest) and reads it back: the registry holds the same index digest, with both platforms.
func TestPush(t *testing.T) {
	lines, archive := makeImage(t, fakeBins(t, ""), "1700000000")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	top, err := layout.ImageIndexFromPath(extract(t, archive))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := top.IndexManifest()
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(strings.TrimPrefix(srv.URL, "http://") + "/kubectl-mcs:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(tag)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != lines[1] {
		t.Errorf("the registry holds %s, make image printed %s", desc.Digest, lines[1])
	}
	pushed, err := desc.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(pushed); err != nil {
		t.Errorf("the pushed index: %v", err)
	}
}

func TestRefused(t *testing.T) {
	bins := fakeBins(t, "")
	base := func(ref, platforms string) []string {
		return []string{"-ref", ref, "-version", "v1", "-revision", "r", "-platforms", platforms, "-bin-dir", bins,
			"-o", filepath.Join(t.TempDir(), "x.tar"), "-mtime", "1"}
	}
	for want, args := range map[string][]string{
		"want NAME:TAG":         base("kubectl-mcs/kubectl-mcs", "linux/amd64"),
		"without a digest":      base("kubectl-mcs/kubectl-mcs:v1@sha256:"+strings.Repeat("0", 64), "linux/amd64"),
		"must be lowercase":     base("kubectl-mcs/Kubectl-MCS:v1", "linux/amd64"),
		`"darwin/arm64" is not`: base("kubectl-mcs/kubectl-mcs:v1", "linux/amd64,darwin/arm64"),
		"linux_s390x":           base("kubectl-mcs/kubectl-mcs:v1", "linux/s390x"),
	} {
		if err := run(args, io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	args := base("kubectl-mcs/kubectl-mcs:v1", "linux/amd64")
	if err := run(args[:len(args)-2], io.Discard); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("no SOURCE_DATE_EPOCH: %v", err)
	}
}

// The archive's own entries: fixed times, nothing but the layout.
func TestArchiveEntries(t *testing.T) {
	_, archive := makeImage(t, fakeBins(t, ""), "1700000000")
	var names []string
	eachEntry(t, bytes.NewReader(archive), func(h *tar.Header, b []byte) {
		if h.ModTime.Unix() != 1700000000 {
			t.Errorf("%s: modified %v", h.Name, h.ModTime)
		}
		var l struct{ ImageLayoutVersion string }
		if h.Name == "oci-layout" && (json.Unmarshal(b, &l) != nil || l.ImageLayoutVersion != "1.0.0") {
			t.Errorf("oci-layout %s", b)
		}
		names = append(names, h.Name)
	})
	// One index, two manifests, two configs, two layers.
	if len(names) != 4+7 || names[0] != "oci-layout" || names[1] != "index.json" {
		t.Errorf("entries %v", names)
	}
}
