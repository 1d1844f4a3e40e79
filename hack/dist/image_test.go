package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageContext(t *testing.T) {
	bins := fakeBins(t, []string{"linux/amd64", "linux/arm64", "darwin/arm64"})
	out := filepath.Join(t.TempDir(), "image")
	if err := imageCmd([]string{"-version", "v1.2.3", "-platforms", "linux/amd64,linux/arm64,darwin/arm64", "-bin-dir", bins, "-out", out}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		b, err := os.ReadFile(filepath.Join(out, p, binName))
		if err != nil || string(b) != "binary for "+p {
			t.Errorf("%s binary: %q %v", p, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "darwin")); err == nil {
		t.Error("a darwin binary went into the image context")
	}
	df, _ := os.ReadFile(filepath.Join(out, "Dockerfile"))
	for _, want := range []string{"FROM " + imageBase, "USER 65532:65532", `ENTRYPOINT ["/kubectl-mcs"]`, `version="v1.2.3"`} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, df)
		}
	}
	if err := imageCmd([]string{"-version", "v1", "-platforms", "darwin/arm64", "-bin-dir", bins, "-out", out}); err == nil {
		t.Error("an image context without a linux binary")
	}
}

func TestCheckDockerfile(t *testing.T) {
	good := dockerfile("v1.2.3")
	for _, tc := range []struct{ name, dockerfile, want string }{
		{"shell-form entrypoint", strings.Replace(good, `ENTRYPOINT ["/kubectl-mcs"]`, "ENTRYPOINT /kubectl-mcs", 1), "JSON array"},
		{"root", strings.Replace(good, "USER 65532:65532", "USER 0", 1), "root"},
		{"no user", strings.Replace(good, "USER 65532:65532\n", "", 1), "root"},
		{"entrypoint not copied", strings.Replace(good, `["/kubectl-mcs"]`, `["/bin/sync"]`, 1), "does not run a copied file"},
		{"unknown instruction", good + "RUN echo\n", "RUN"},
		{"copy before from", "COPY a b\n" + good, "before FROM"},
		{"missing binary", strings.Replace(good, "${TARGETPLATFORM}/kubectl-mcs", "${TARGETPLATFORM}/other", 1), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "linux", "amd64"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "linux", "amd64", binName), []byte("x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := checkDockerfile(dir, []string{"linux/amd64"}); err != nil {
				t.Fatalf("the good Dockerfile: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(tc.dockerfile), 0o644); err != nil {
				t.Fatal(err)
			}
			err := checkDockerfile(dir, []string{"linux/amd64"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
