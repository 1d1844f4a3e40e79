// Package archives reads back the release archives that make dist writes, for the tests of
// hack/dist and of the krew install.
package archives

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Entries lists the files of a .zip or .tar.gz archive by name.
func Entries(path string) (map[string]fs.FileInfo, error) {
	entries := map[string]fs.FileInfo{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			entries[f.Name] = f.FileInfo()
		}
		return entries, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		entries[h.Name] = h.FileInfo()
	}
}
