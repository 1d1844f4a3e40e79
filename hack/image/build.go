package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	binName    = "kubectl-mcs"
	entrypoint = "/" + binName
	// user is distroless's "nonroot", the Deployments' runAsUser (pkg/install).
	user = "65532:65532"
	home = "/home/nonroot"
)

// spec is what goes into the image; the same spec gives the same bytes.
type spec struct {
	version, revision string
	created           time.Time        // every timestamp: SOURCE_DATE_EPOCH
	binaries          []platformBinary // one image per entry, in this order
}

type platformBinary struct {
	os, arch string
	binary   []byte
}

// The layer's files besides the binary: enough of a root for a non-root user with a home, and no
// shell, libc or certificates (the binary is static and trusts the CAs its kubeconfigs name).
var (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:" + home + ":/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// build makes the OCI image index: one single-layer image per platform.
func build(s spec) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range s.binaries {
		img, err := image(s, p)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", p.os, p.arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        plainImage{img},
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.os, Architecture: p.arch}},
		})
	}
	return idx, nil
}

// plainImage is an image described in the index as images are: go-containerregistry would add an
// artifactType (the config's media type), which tools written before OCI 1.1 drop when they copy
// the index (skopeo 1.9), giving the same images another index digest in the registry.
type plainImage struct{ v1.Image }

func (i plainImage) Descriptor() (*v1.Descriptor, error) {
	d, err := partial.Descriptor(i.Image)
	if err != nil {
		return nil, err
	}
	d.ArtifactType = ""
	return d, nil
}

func image(s spec, p platformBinary) (v1.Image, error) {
	gz, err := layerTarGz(p.binary, s.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	diffID, err := layer.DiffID()
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: s.created}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: p.arch,
		OS:           p.os,
		Created:      created,
		Config: v1.Config{
			User:       user,
			Entrypoint: []string{entrypoint},
			Env:        []string{"HOME=" + home},
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":    binName,
				"org.opencontainers.image.version":  s.version,
				"org.opencontainers.image.revision": s.revision,
				"org.opencontainers.image.created":  s.created.Format(time.RFC3339),
				"org.opencontainers.image.licenses": "Apache-2.0",
			},
		},
		RootFS:  v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{diffID}},
		History: []v1.History{{Created: created, CreatedBy: "make image: " + entrypoint + ", /etc/passwd, /etc/group"}},
	})
	if err != nil {
		return nil, err
	}
	return mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON), nil
}

// layerTarGz is the one layer, gzipped: fixed order, owners, modes and times, so that its digest
// depends on the binary and the time alone. Only the user's home belongs to the user.
func layerTarGz(binary []byte, mtime time.Time) ([]byte, error) {
	type entry struct {
		name     string
		mode     int64
		uid      int
		contents []byte
	}
	entries := []entry{
		{"etc/", 0o755, 0, nil},
		{"etc/group", 0o644, 0, []byte(group)},
		{"etc/passwd", 0o644, 0, []byte(passwd)},
		{"home/", 0o755, 0, nil},
		{"home/nonroot/", 0o700, 65532, nil},
		{binName, 0o755, 0, binary},
		{"tmp/", 0o1777, 0, nil},
	}
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{
			Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.contents)),
			Uid: e.uid, Gid: e.uid, Uname: "root", Gname: "root", ModTime: mtime, Format: tar.FormatUSTAR,
		}
		if e.uid != 0 {
			h.Uname, h.Gname = "nonroot", "nonroot"
		}
		if e.name[len(e.name)-1] == '/' {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
