// Command dist packs the release archives of kubectl-mcs and renders its krew manifest.
//
//	go run ./hack/dist archive -version V -platforms linux/amd64,... -bin-dir dist/bin -out dist
//	go run ./hack/dist manifest -version V -base-url URL -dir dist -o dist/mcs.yaml
//
// archive packs, for each platform, bin-dir/OS_ARCH/kubectl-mcs[.exe] with LICENSE, README.md and
// kubectl_complete-mcs[.cmd] into kubectl-mcs_V_OS_ARCH.tar.gz (.zip for Windows). The archives
// are reproducible: fixed owner, modes and times ($SOURCE_DATE_EPOCH, or -mtime).
//
// manifest renders the krew-manifest.yaml template with the version, BASE-URL/ARCHIVE and the
// sha256 of each archive found in -dir, then checks the result: the file is named after the
// plugin, every platform points at an existing archive with its checksum and the right bin, no
// platform is listed twice, and no archive is left out.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/internal/krewmanifest"
)

const (
	binName        = "kubectl-mcs"
	completionName = "kubectl_complete-mcs"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: dist archive|manifest [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "archive":
		err = archiveCmd(os.Args[2:])
	case "manifest":
		err = manifestCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: archive or manifest", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dist:", err)
	os.Exit(1)
}

// archiveName is the file name of a platform's archive.
func archiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", binName, version, goos, goarch, ext)
}

// archivePattern matches archive names; it captures version, OS and arch.
var archivePattern = regexp.MustCompile(`^` + binName + `_(v[^_]+)_([a-z0-9]+)_([a-z0-9]+)\.(?:tar\.gz|zip)$`)

type file struct {
	name string // in the archive
	path string // on disk
	mode int64
}

func archiveCmd(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	version := fs.String("version", "", "plugin version (vMAJOR.MINOR.PATCH[-PRE])")
	platforms := fs.String("platforms", "", "comma-separated OS/ARCH list")
	binDir := fs.String("bin-dir", "dist/bin", "directory holding OS_ARCH/kubectl-mcs[.exe]")
	out := fs.String("out", "dist", "output directory")
	root := fs.String("root", ".", "repository root (LICENSE, README.md, hack/dist)")
	mtime := fs.Int64("mtime", sourceDateEpoch(), "modification time of every file, Unix seconds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !archivePattern.MatchString(archiveName(*version, "linux", "amd64")) {
		return fmt.Errorf("-version %q: want vMAJOR.MINOR.PATCH[-PRE] without underscores", *version)
	}
	if *platforms == "" {
		return errors.New("-platforms is required")
	}
	modTime := time.Unix(*mtime, 0).UTC()
	for _, p := range strings.Split(*platforms, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || goarch == "" {
			return fmt.Errorf("-platforms: %q is not OS/ARCH", p)
		}
		exe, script := binName, completionName
		if goos == "windows" {
			exe, script = binName+".exe", completionName+".cmd"
		}
		files := []file{
			{exe, filepath.Join(*binDir, goos+"_"+goarch, exe), 0o755},
			{script, filepath.Join(*root, "hack", "dist", script), 0o755},
			{"LICENSE", filepath.Join(*root, "LICENSE"), 0o644},
			{"README.md", filepath.Join(*root, "README.md"), 0o644},
		}
		name := filepath.Join(*out, archiveName(*version, goos, goarch))
		var buf bytes.Buffer
		var err error
		if goos == "windows" {
			err = writeZip(&buf, files, modTime)
		} else {
			err = writeTarGz(&buf, files, modTime)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := writeFileAtomic(name, buf.Bytes()); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		fmt.Printf("%s\t%d bytes\tsha256 %s\n", name, buf.Len(), hex.EncodeToString(sum[:]))
	}
	return nil
}

func sourceDateEpoch() int64 {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	return time.Now().Unix()
}

func writeTarGz(w io.Writer, files []file, modTime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: f.name, Size: int64(len(data)), Mode: f.mode,
			ModTime: modTime, Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []file, modTime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: modTime}
		hdr.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// archive is one platform's archive in the dist directory.
type archive struct {
	name, sha256 string
}

// manifestData is what the template sees.
type manifestData struct {
	Version  string
	BaseURL  string
	archives map[string]*archive // by OS/ARCH
}

func (d *manifestData) get(goos, goarch string) (*archive, error) {
	a, ok := d.archives[goos+"/"+goarch]
	if !ok {
		return nil, fmt.Errorf("no archive for %s/%s (%s)", goos, goarch, archiveName(d.Version, goos, goarch))
	}
	return a, nil
}

// URI is the download URL of the platform's archive.
func (d *manifestData) URI(goos, goarch string) (string, error) {
	a, err := d.get(goos, goarch)
	if err != nil {
		return "", err
	}
	return d.BaseURL + "/" + a.name, nil
}

// SHA256 is the lowercase hex sha256 of the platform's archive.
func (d *manifestData) SHA256(goos, goarch string) (string, error) {
	a, err := d.get(goos, goarch)
	if err != nil {
		return "", err
	}
	return a.sha256, nil
}

func manifestCmd(args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	version := fs.String("version", "", "plugin version, as in the archive names")
	baseURL := fs.String("base-url", "", "URL the archives are downloaded from (ARCHIVE is appended)")
	dir := fs.String("dir", "dist", "directory holding the archives")
	tmplPath := fs.String("template", "krew-manifest.yaml", "manifest template")
	out := fs.String("o", "dist/mcs.yaml", "output file, named after the plugin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || *baseURL == "" {
		return errors.New("-version and -base-url are required")
	}
	data := &manifestData{Version: *version, BaseURL: strings.TrimSuffix(*baseURL, "/"), archives: map[string]*archive{}}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		m := archivePattern.FindStringSubmatch(e.Name())
		if m == nil || m[1] != *version {
			continue
		}
		b, err := os.ReadFile(filepath.Join(*dir, e.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		data.archives[m[2]+"/"+m[3]] = &archive{name: e.Name(), sha256: hex.EncodeToString(sum[:])}
	}
	if len(data.archives) == 0 {
		return fmt.Errorf("no %s archives of %s in %s: run make dist", binName, *version, *dir)
	}
	tmpl, err := template.New(filepath.Base(*tmplPath)).Option("missingkey=error").ParseFiles(*tmplPath)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return err
	}
	if err := check(buf.Bytes(), data, filepath.Base(*out)); err != nil {
		return fmt.Errorf("rendered manifest: %w", err)
	}
	if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Printf("%s\t%d platforms\t%s\n", *out, len(data.archives), data.BaseURL)
	return nil
}

// check verifies the rendered manifest against the archives.
func check(rendered []byte, data *manifestData, fileName string) error {
	var p krewmanifest.Plugin
	if err := yaml.Unmarshal(rendered, &p); err != nil {
		return err
	}
	if want := p.Metadata.Name + ".yaml"; fileName != want {
		return fmt.Errorf("krew wants the manifest of plugin %q in a file named %s, not %s", p.Metadata.Name, want, fileName)
	}
	if p.Spec.Version != data.Version {
		return fmt.Errorf("spec.version %q, want %q", p.Spec.Version, data.Version)
	}
	seen := map[string]bool{}
	for i, pl := range p.Spec.Platforms {
		key := pl.Selector.MatchLabels["os"] + "/" + pl.Selector.MatchLabels["arch"]
		a, ok := data.archives[key]
		if !ok {
			return fmt.Errorf("spec.platforms[%d] (%s): no archive", i, key)
		}
		if seen[key] {
			return fmt.Errorf("spec.platforms[%d]: %s listed twice", i, key)
		}
		seen[key] = true
		if pl.URI != data.BaseURL+"/"+a.name || pl.SHA256 != a.sha256 {
			return fmt.Errorf("spec.platforms[%d] (%s): uri %q sha256 %q, want %q %q", i, key, pl.URI, pl.SHA256, data.BaseURL+"/"+a.name, a.sha256)
		}
		wantBin := binName
		if pl.Selector.MatchLabels["os"] == "windows" {
			wantBin += ".exe"
		}
		if pl.Bin != wantBin {
			return fmt.Errorf("spec.platforms[%d] (%s): bin %q, want %q", i, key, pl.Bin, wantBin)
		}
	}
	var unused []string
	for key, a := range data.archives {
		if !seen[key] {
			unused = append(unused, a.name)
		}
	}
	if len(unused) > 0 {
		slices.Sort(unused)
		return fmt.Errorf("archives not listed in the template: %s", strings.Join(unused, ", "))
	}
	return nil
}
