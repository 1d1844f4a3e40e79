package dnsservercmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// run completes, validates and runs dns-server with args against an empty kubeconfig.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\ncurrent-context: member2\ncontexts:\n- name: member2\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kc
	var out bytes.Buffer
	cmd, o := newCmd(flags, genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	if err := cmd.ParseFlags(args); err != nil {
		return "", err
	}
	if err := o.Complete(cmd); err != nil {
		return "", err
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	if !o.PrintManifests {
		return "", nil // it would serve
	}
	err := o.Run(context.Background())
	return out.String(), err
}

func TestPrintManifests(t *testing.T) {
	out, err := run(t, "--print-manifests", "--image=img:1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	// The objects are every member's: no document names the current context's cluster (they
	// were once headed "# cluster: member2").
	if !strings.HasPrefix(out, "# The DNS server of a member: the same objects for every member; apply them in each.\n---\n") {
		t.Errorf("no header saying the objects are every member's:\n%s", out)
	}
	for _, doc := range strings.Split(out, "---\n")[1:] {
		if strings.Contains(doc, "# cluster:") {
			t.Errorf("a document names a cluster:\n%s", doc)
		}
		var o struct {
			Kind     string
			Metadata struct {
				Name, Namespace string
				Labels          map[string]string
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if !names.IsManaged(o.Metadata.Labels) || strings.Contains(doc, "creationTimestamp") || strings.Contains(doc, "status:") {
			t.Errorf("%s %s: not labelled ours, or carries server fields:\n%s", o.Kind, o.Metadata.Name, doc)
		}
		kinds = append(kinds, o.Kind+"/"+o.Metadata.Namespace+"/"+o.Metadata.Name)
	}
	want := "Namespace//kubectl-mcs-system ServiceAccount/kubectl-mcs-system/kubectl-mcs-dns ClusterRole//kubectl-mcs-dns " +
		"ClusterRoleBinding//kubectl-mcs-dns Deployment/kubectl-mcs-system/kubectl-mcs-dns Service/kubectl-mcs-system/kubectl-mcs-dns"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("objects %s\nwant    %s", got, want)
	}
	for _, s := range []string{"image: img:1", "- dns-server\n", "- --listen=:5353\n", "path: /readyz", "protocol: UDP", "port: 53\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("missing %q in\n%s", s, out)
		}
	}
	if out, err := run(t, "--print-manifests", "--image=img:1", "-o", "json", "--dns-domain=MCS.example.", "--ttl=30"); err != nil ||
		!strings.Contains(out, `"kind": "List"`) || !strings.Contains(out, `"--dns-domain=mcs.example"`) || !strings.Contains(out, `"--ttl=30"`) {
		t.Errorf("-o json with another zone and TTL: %v\n%s", err, out)
	}
}

func TestValidate(t *testing.T) {
	if _, err := run(t, "--listen", "127.0.0.1:5353", "--ttl", "5"); err != nil {
		t.Errorf("valid flags: %v", err)
	}
	for want, args := range map[string][]string{
		"--ttl 0":                              {"--ttl", "0"},
		"--listen \"5353\"":                    {"--listen", "5353"},
		`--dns-domain "a_b"`:                   {"--dns-domain", "a_b"},
		"--image goes with --print-manifests":  {"--image", "x"},
		"--output goes with --print-manifests": {"-o", "json"},
		`--output "name"`:                      {"--print-manifests", "--image=img:1", "-o", "name"},
		// A test binary, as a plain go build, has no image stamped.
		"no default image for this build (not built by make): pass --image=": {"--print-manifests"},
	} {
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
}
