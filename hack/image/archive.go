package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The index.json annotations that name the image on import: containerd takes the first as the
// image's name as is (ctr images import, which the kubelet's CRI then finds by that name); the
// second is the OCI layout's own, the tag, which skopeo's oci-archive:FILE:TAG selects.
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// runtimeName is the reference as the kubelet asks its runtime for it: CRI normalises a reference
// without a host to the default registry's, so an image imported under the short name would never
// be found. The library does it, so that no registry is named here.
func runtimeName(ref reference.NamedTagged) string { return ref.String() }

// parseRef takes NAME:TAG (no digest), NAME as the runtime would read it.
func parseRef(s string) (reference.NamedTagged, error) {
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", s, err)
	}
	tagged, ok := named.(reference.NamedTagged)
	if _, digested := named.(reference.Digested); !ok || digested {
		return nil, fmt.Errorf("image reference %q: want NAME:TAG, without a digest", s)
	}
	return tagged, nil
}

// writeArchive writes idx as an OCI image layout in one tar (an "OCI archive"): oci-layout,
// index.json naming the one index, and every blob under blobs/sha256/, in a fixed order with
// fixed times, so that equal indexes give equal archives.
func writeArchive(w io.Writer, idx v1.ImageIndex, ref reference.NamedTagged, mtime time.Time) error {
	blobs, err := collectBlobs(idx)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	size, err := idx.Size()
	if err != nil {
		return err
	}
	top, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIImageIndex, Digest: digest, Size: size,
			Annotations: map[string]string{annotationContainerdName: runtimeName(ref), annotationRefName: ref.Tag()},
		}},
	})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	header := func(name string, size int64) *tar.Header {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: mtime, Format: tar.FormatUSTAR}
		if name[len(name)-1] == '/' {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		return h
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", top},
		{"blobs/", nil},
		{"blobs/sha256/", nil},
	} {
		if err := tw.WriteHeader(header(f.name, int64(len(f.data)))); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	for _, b := range blobs {
		if err := tw.WriteHeader(header("blobs/sha256/"+b.digest.Hex, b.size)); err != nil {
			return err
		}
		rc, err := b.open()
		if err != nil {
			return err
		}
		n, err := io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return err
		}
		if n != b.size {
			return fmt.Errorf("blob %s: %d bytes, its descriptor says %d", b.digest, n, b.size)
		}
	}
	return tw.Close()
}

type blob struct {
	digest v1.Hash
	size   int64
	open   func() (io.ReadCloser, error)
}

// collectBlobs is every blob the index reaches (itself, manifests, configs, layers), once each,
// sorted by digest.
func collectBlobs(idx v1.ImageIndex) ([]blob, error) {
	seen := map[v1.Hash]blob{}
	add := func(raw []byte, err error) error {
		if err != nil {
			return err
		}
		h, n, err := v1.SHA256(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		seen[h] = blob{h, n, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }}
		return nil
	}
	if err := add(idx.RawManifest()); err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		if err := add(img.RawManifest()); err != nil {
			return nil, err
		}
		if err := add(img.RawConfigFile()); err != nil {
			return nil, err
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range layers {
			h, err := l.Digest()
			if err != nil {
				return nil, err
			}
			n, err := l.Size()
			if err != nil {
				return nil, err
			}
			seen[h] = blob{h, n, l.Compressed}
		}
	}
	out := make([]blob, 0, len(seen))
	for _, b := range seen {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b blob) int { return strings.Compare(a.digest.Hex, b.digest.Hex) })
	return out, nil
}
