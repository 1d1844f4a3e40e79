// Command image builds the container image of kubectl-mcs from the static linux binaries, with
// no Docker, no registry and no base image: `make image` and `make dist` run it.
//
//	go run ./hack/image -ref IMAGE_REPO:VERSION -version V -revision COMMIT \
//	  -platforms linux/amd64,linux/arm64 -bin-dir dist/bin -o dist/image/kubectl-mcs.tar
//
// Each platform's image is one layer (bin-dir/OS_ARCH/kubectl-mcs as /kubectl-mcs, /etc/passwd
// and /etc/group naming the non-root user 65532, its home and /tmp), run as 65532:65532 with the
// exec-form entrypoint /kubectl-mcs and the OCI labels. The images go into one OCI image index,
// written as an OCI layout in one tar that `ctr images import` names after -ref (as the kubelet
// will look it up) and that `skopeo copy oci-archive:` reads. Every time in it is -mtime
// ($SOURCE_DATE_EPOCH), so the same binaries give the same index digest.
//
// It prints three lines: the reference, the index digest and the archive's path.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	refFlag := fs.String("ref", "", "image reference NAME:TAG (make: IMAGE_REPO:VERSION)")
	version := fs.String("version", "", "version, for the org.opencontainers.image.version label")
	revision := fs.String("revision", "", "source revision, for the org.opencontainers.image.revision label")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated linux/ARCH list, one image each")
	binDir := fs.String("bin-dir", "dist/bin", "directory holding OS_ARCH/kubectl-mcs")
	out := fs.String("o", "dist/image/kubectl-mcs.tar", "the OCI archive to write")
	mtime := fs.Int64("mtime", -1, "every timestamp, Unix seconds (default $SOURCE_DATE_EPOCH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || *revision == "" {
		return errors.New("-version and -revision are required")
	}
	ref, err := parseRef(*refFlag)
	if err != nil {
		return err
	}
	if *mtime < 0 {
		s := os.Getenv("SOURCE_DATE_EPOCH")
		if *mtime, err = strconv.ParseInt(s, 10, 64); err != nil || *mtime < 0 {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: want Unix seconds (or pass -mtime): the image's times must not be the clock's", s)
		}
	}
	s := spec{version: *version, revision: *revision, created: time.Unix(*mtime, 0).UTC()}
	for _, p := range strings.Split(*platforms, ",") {
		goos, goarch, _ := strings.Cut(strings.TrimSpace(p), "/")
		if goos != "linux" || goarch == "" {
			return fmt.Errorf("-platforms: %q is not linux/ARCH", p)
		}
		b, err := os.ReadFile(filepath.Join(*binDir, goos+"_"+goarch, binName))
		if err != nil {
			return err
		}
		s.binaries = append(s.binaries, platformBinary{goos, goarch, b})
	}
	idx, err := build(s)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp.%d", *out, os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := writeArchive(f, idx, ref, s.created); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n%s\n%s\n", *refFlag, digest, *out)
	return err
}
