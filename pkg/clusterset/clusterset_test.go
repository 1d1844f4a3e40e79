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

// writeKubeconfig writes a kubeconfig holding the contexts, all on one unreachable server.
func writeKubeconfig(t *testing.T, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {}}]\ncontexts:\n")
	for _, c := range contexts {
		b.WriteString("- {name: " + c + ", context: {cluster: c, user: u}}\n")
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The clusterset as --context, --contexts, KUBECTL_MCS_CONTEXTS and KUBECONFIG name it, and the
// one-line refusals of the mistakes of a first hour.
func TestRefs(t *testing.T) {
	kc := writeKubeconfig(t, "member1", "member2", "Member3")
	for _, tc := range []struct {
		name                    string
		kubeconfigEnv, envSet   string
		flag, context           string
		noKubeconfigFlag, write bool
		want                    []string
		wantErr                 string
	}{
		{name: "every context (read)", want: nil, wantErr: `context "Member3" is not a valid cluster ID`},
		{name: "--contexts", flag: "member1,member2", want: []string{"member1", "member2"}},
		{name: "unknown --context with --contexts", flag: "member1", context: "member9", wantErr: `context "member9" not found in kubeconfig`},
		{name: "unknown --context alone", context: "member9", wantErr: `context "member9" not found in kubeconfig`},
		{name: "--context alone is a clusterset of one", context: "member2", want: []string{"member2"}},
		{name: "--context alone, writing", context: "member2", write: true, want: []string{"member2"}},
		{name: "--context with the variable", context: "member2", envSet: "member1,member2", want: []string{"member1", "member2"}},
		{name: "capital letter", flag: "member1,Member3", wantErr: `context "Member3" is not a valid cluster ID (RFC 1123 label); give one with --contexts Member3=member3`},
		{name: "capital letter with an ID", flag: "member1,Member3=member3", want: []string{"member1", "member3"}},
		{name: "capital letter, not in the kubeconfig", flag: "member1,Member9", wantErr: `context "Member9" not found in kubeconfig`},
		{name: "KUBECONFIG names no file", kubeconfigEnv: "/nonexistent", noKubeconfigFlag: true, flag: "member1", wantErr: "KUBECONFIG=/nonexistent: no such file"},
		{name: "KUBECONFIG names no file, no --contexts", kubeconfigEnv: "/nonexistent", noKubeconfigFlag: true, wantErr: "KUBECONFIG=/nonexistent: no such file"},
		{name: "KUBECONFIG names files, none there", kubeconfigEnv: "/no/a" + string(filepath.ListSeparator) + "/no/b", noKubeconfigFlag: true, flag: "member1", wantErr: "none of these files exists"},
		{name: "KUBECONFIG with one file there", kubeconfigEnv: "/no/a" + string(filepath.ListSeparator) + kc, noKubeconfigFlag: true, flag: "member1", want: []string{"member1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfigEnv)
			t.Setenv(EnvContexts, tc.envSet)
			cf := genericclioptions.NewConfigFlags(false)
			if !tc.noKubeconfigFlag {
				cf.KubeConfig = &kc
			}
			cf.Context = &tc.context
			refs, err := (&Loader{ConfigFlags: cf, Flags: &Flags{Contexts: tc.flag}}).Refs(tc.write)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || len(err.Error()) > 200 {
					t.Fatalf("error %v, want one short line containing %q", err, tc.wantErr)
				}
				return
			}
			var ids []string
			for _, r := range refs {
				ids = append(ids, r.ID)
			}
			if err != nil || !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("got %v, %v; want %v", ids, err, tc.want)
			}
		})
	}
}

// A Karmada control plane named with --context or --karmada-context must be in the kubeconfig.
func TestKarmadaContextNotFound(t *testing.T) {
	kc := writeKubeconfig(t, "karmada")
	for _, f := range []KarmadaFlags{{Context: "nosuch"}, {Enabled: true}} {
		cf := genericclioptions.NewConfigFlags(false)
		cf.KubeConfig = &kc
		ctx := "nosuch"
		cf.Context = &ctx
		if err := f.Complete(cf); err == nil || err.Error() != `context "nosuch" not found in kubeconfig` {
			t.Errorf("%+v: %v", f, err)
		}
	}
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig = &kc
	if err := HasContext(cf, "karmada"); err != nil {
		t.Error(err)
	}
	if err := HasContext(cf, "nosuch"); err == nil || err.Error() != `context "nosuch" not found in kubeconfig` {
		t.Errorf("diagnose --karmada-context=nosuch: %v", err)
	}
}

func TestSuggestID(t *testing.T) {
	for in, want := range map[string]string{"Member1": "member1", "arn:aws:eks:eu-west-1:123:cluster/Prod": "arn-aws-eks-eu-west-1-123-cluster-prod",
		"_x_": "x", "@@": "ID", strings.Repeat("a", 70): strings.Repeat("a", 63)} {
		if got := SuggestID(in); got != want || (want != "ID" && !ValidID(got)) {
			t.Errorf("SuggestID(%q) = %q, want %q", in, got, want)
		}
	}
}
