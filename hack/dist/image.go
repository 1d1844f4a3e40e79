package main

// The container build context of `make dist`: dist/image/Dockerfile and the static linux binaries
// by platform, for `docker buildx build --platform ... dist/image`. Docker is not needed to make
// it: checkDockerfile reads back what a build would do.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// imageBase is distroless "static": no shell, no libc (the binary is CGO_ENABLED=0), its
// "nonroot" user 65532 (the Deployment's runAsUser).
const imageBase = "gcr.io/distroless/static:nonroot"

func dockerfile(version string) string {
	return fmt.Sprintf(`# kubectl-mcs %[1]s: the image of `+"`kubectl mcs sync --watch`"+` in a cluster (see
# docs/running-in-a-cluster.md). Build it from this directory, one platform or several:
#   docker buildx build --platform linux/amd64,linux/arm64 -t %[2]s:%[1]s .
FROM %[3]s
# Set by BuildKit for each platform built; the default serves the classic builder.
ARG TARGETPLATFORM=linux/amd64
COPY ${TARGETPLATFORM}/kubectl-mcs /kubectl-mcs
USER 65532:65532
ENTRYPOINT ["/kubectl-mcs"]
LABEL org.opencontainers.image.title="kubectl-mcs" org.opencontainers.image.version="%[1]s"
`, version, install.ImageRepository, imageBase)
}

func imageCmd(args []string) error {
	var o struct{ version, platforms, binDir, out string }
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.version, "version", "", "plugin version")
	fs.StringVar(&o.platforms, "platforms", "", "comma-separated OS/ARCH list; the linux ones go into the image")
	fs.StringVar(&o.binDir, "bin-dir", "dist/bin", "directory holding OS_ARCH/kubectl-mcs")
	fs.StringVar(&o.out, "out", "dist/image", "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.version == "" {
		return errors.New("-version is required")
	}
	var linux []string
	for _, p := range strings.Split(o.platforms, ",") {
		if p = strings.TrimSpace(p); strings.HasPrefix(p, "linux/") {
			linux = append(linux, p)
		}
	}
	if len(linux) == 0 {
		return fmt.Errorf("-platforms %q: no linux platform to put in an image", o.platforms)
	}
	return writeImage(o.version, linux, o.binDir, o.out)
}

// writeImage lays out the context: OS/ARCH/kubectl-mcs per platform and the Dockerfile.
func writeImage(version string, linux []string, binDir, out string) error {
	for _, p := range linux {
		b, err := os.ReadFile(filepath.Join(binDir, strings.ReplaceAll(p, "/", "_"), binName))
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.FromSlash(p), binName)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(filepath.Join(out, "Dockerfile"), []byte(dockerfile(version))); err != nil {
		return err
	}
	if err := checkDockerfile(out, linux); err != nil {
		return fmt.Errorf("%s/Dockerfile: %w", out, err)
	}
	fmt.Printf("%s/Dockerfile\t%s\n", out, strings.Join(linux, ","))
	return nil
}

// checkDockerfile reads a build context's Dockerfile as a build would for each platform: known
// instructions only, FROM first (after global ARGs), every COPY source present and executable,
// an exec-form ENTRYPOINT naming what was copied, a non-root USER.
func checkDockerfile(dir string, platforms []string) error {
	b, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return err
	}
	known := map[string]bool{"FROM": true, "ARG": true, "COPY": true, "USER": true, "ENTRYPOINT": true, "LABEL": true}
	var from, user string
	var copied, entry []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch {
		case !known[instr]:
			return fmt.Errorf("line %d: unknown or unexpected instruction %q", i+1, instr)
		case instr != "FROM" && instr != "ARG" && from == "":
			return fmt.Errorf("line %d: %s before FROM", i+1, instr)
		case instr == "FROM":
			if from != "" || rest == "" {
				return fmt.Errorf("line %d: want one FROM with an image", i+1)
			}
			from = rest
		case instr == "COPY":
			f := strings.Fields(rest)
			if len(f) != 2 {
				return fmt.Errorf("line %d: COPY SRC DST expected", i+1)
			}
			for _, p := range platforms {
				src := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(f[0], "${TARGETPLATFORM}", p)))
				st, err := os.Stat(src)
				if err != nil {
					return fmt.Errorf("line %d: platform %s: %w", i+1, p, err)
				}
				if st.Mode()&0o111 == 0 {
					return fmt.Errorf("line %d: %s is not executable", i+1, src)
				}
			}
			copied = append(copied, f[1])
		case instr == "USER":
			user = rest
		case instr == "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &entry); err != nil || len(entry) == 0 {
				return fmt.Errorf("line %d: ENTRYPOINT must be a JSON array (exec form: the base has no shell)", i+1)
			}
		}
	}
	switch {
	case from == "":
		return errors.New("no FROM")
	case len(entry) == 0 || !slices.Contains(copied, path.Clean(entry[0])):
		return fmt.Errorf("ENTRYPOINT %v does not run a copied file (%v)", entry, copied)
	case user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root"):
		return fmt.Errorf("USER %q: the image must not run as root", user)
	}
	return nil
}
