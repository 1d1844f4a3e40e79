package clusterset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestKarmadaFlagsAndControlPlaneName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, current string) string {
		p := filepath.Join(dir, name)
		cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {}}]\n" +
			"contexts: [{name: karmada-apiserver, context: {cluster: c, user: u}}, {name: member1, context: {cluster: c, user: u}}]\ncurrent-context: \"" + current + "\"\n"
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, current string
		args          []string
		enabled       bool
		want          string
	}{
		{"--karmada-context", "member1", []string{"--karmada-context=karmada-apiserver"}, true, "karmada-apiserver"},
		{"--karmada on the current context", "karmada-apiserver", []string{"--karmada"}, true, "karmada-apiserver"},
		{"no context at all", "", []string{"--karmada"}, true, "karmada"},
		{"neither", "member1", nil, false, "member1"},
	} {
		kubeconfig := write(tc.name, tc.current)
		cf := genericclioptions.NewConfigFlags(false)
		cf.KubeConfig = &kubeconfig
		var f KarmadaFlags
		fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
		f.AddFlags(fs, "show its services")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := f.Complete(cf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if f.Enabled != tc.enabled || ControlPlaneName(cf) != tc.want {
			t.Errorf("%s: enabled %v, name %q; want %v, %q", tc.name, f.Enabled, ControlPlaneName(cf), tc.enabled, tc.want)
		}
	}
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	(&KarmadaFlags{}).AddFlags(fs, "show its services")
	if u := fs.Lookup("karmada").Usage; u != "The --context cluster is a Karmada control plane: show its services" {
		t.Errorf("--karmada usage %q", u)
	}
}
