package clusterset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestParseContexts(t *testing.T) {
	cases := []struct {
		in      string
		want    []Ref
		wantErr string
	}{
		{in: "member1,member2", want: []Ref{{"member1", "member1", IDFromContext}, {"member2", "member2", IDFromContext}}},
		{in: " a=east , b=west ", want: []Ref{{"a", "east", IDFromFlag}, {"b", "west", IDFromFlag}}},
		{in: "kind-member1=member1", want: []Ref{{"kind-member1", "member1", IDFromFlag}}},
		{in: "", want: nil},
		{in: "Admin@Prod", wantErr: `context "Admin@Prod" is not a valid cluster ID (RFC 1123 label); give one with --contexts Admin@Prod=admin-prod`},
		{in: "ctx=Bad_ID", wantErr: `context "ctx": cluster ID "Bad_ID" is not a valid RFC 1123 label`},
		{in: "a,a", wantErr: `context "a" is listed twice`},
		{in: "a=x,b=x", wantErr: `contexts "a" and "b" both have cluster ID "x"`},
		{in: "=x", wantErr: `has no context name`},
	}
	for _, c := range cases {
		got, err := ParseContexts(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseContexts(%q) error = %v, want it to contain %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseContexts(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestRESTConfigRateLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: one\n  context: {cluster: c, user: u}\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	for _, c := range []struct {
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{{0, 0, DefaultQPS, DefaultBurst}, {500, 1000, 500, 1000}, {7, 0, 7, DefaultBurst}} {
		cfg, err := (&Loader{ConfigFlags: flags, QPS: c.qps, Burst: c.burst}).RESTConfig("one")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.QPS != c.wantQPS || cfg.Burst != c.wantBurst {
			t.Errorf("Loader{QPS: %v, Burst: %d}: config has %v/%d, want %v/%d", c.qps, c.burst, cfg.QPS, cfg.Burst, c.wantQPS, c.wantBurst)
		}
	}
}
