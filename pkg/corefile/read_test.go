package corefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKubeadm(t *testing.T) {
	servers, err := Parse(kubeadm)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Port() != "53" || servers[0].Zones()[0] != "." || servers[0].First != 0 || servers[0].Last != 22 {
		t.Fatalf("servers = %+v", servers)
	}
	k := servers[0].Find("kubernetes")
	if k == nil || strings.Join(k.Args, " ") != "cluster.local in-addr.arpa ip6.arpa" || len(k.Options) != 3 || k.Line != 6 || k.End != 10 {
		t.Fatalf("kubernetes = %+v", k)
	}
	if h := servers[0].Find("health"); h == nil || h.Line != 2 || h.End != 4 {
		t.Fatalf("health = %+v", h)
	}
	var order []string
	for _, d := range servers[0].Directives {
		order = append(order, d.Name)
	}
	if got := strings.Join(order, " "); got != "errors health ready kubernetes prometheus forward cache loop reload loadbalance" {
		t.Errorf("directives in the order of their lines: %s", got)
	}
}

// A snippet an import brings in is part of the block, with the snippet's lines.
func TestParseResolvesSnippets(t *testing.T) {
	in := "(common) {\n  errors\n}\n.:53 {\n  import common\n  kubernetes \"cluster.local\"\n}\n"
	servers, err := Parse(in)
	if err != nil || len(servers) != 1 {
		t.Fatalf("err %v servers %+v", err, servers)
	}
	s := servers[0]
	if e := s.Find("errors"); e == nil || e.Line != 1 || s.First != 3 || s.Last != 6 {
		t.Fatalf("server %+v", s)
	}
	if k := s.Find("kubernetes"); k == nil || k.Line != 5 || strings.Join(k.Args, " ") != "cluster.local" {
		t.Fatalf("kubernetes = %+v", k)
	}
}

// The files an import names are the CoreDNS pod's: they are never read here, even when this
// machine has a file by that name serving the very zone.
func TestParseReadsNoImportedFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.server"), []byte("clusterset.local {\n    whoami\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, imp := range []string{filepath.Join(dir, "*.server"), filepath.Join(dir, "a.server")} {
		in := "import " + imp + "\n" + strings.Replace(kubeadm, "    loadbalance\n", "    loadbalance\n    import "+imp+"\n", 1)
		servers, err := Parse(in)
		if err != nil || len(servers) != 1 || servers[0].First != 1 || servers[0].Find("kubernetes").Line != 7 {
			t.Fatalf("import %s: err %v servers %+v", imp, err, servers)
		}
		if _, err := Apply(in, DefaultDomain, up); err != nil {
			t.Errorf("import %s: %v", imp, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"import before the snippet": {".:53 {\n  import common\n}\n(common) {\n  errors\n}\n", `line 2: import "common" before the snippet's declaration`},
		// The line is the Corefile's, whatever parseImports put before it.
		"line after an import": {"import /x/*.server\n.:53 {\n  kubernetes cluster.local {\n    pods insecure\n", "line 4: Unexpected EOF"},
		"not a plugin":         {"example.org\n.:53 {\n kubernetes cluster.local\n}\n", `line 2: ".:53" is not a plugin's name`},
		"leading brace":        {"}\n.:53 {\n kubernetes cluster.local\n}\n", "line 1: unexpected brace"},
		"stray brace":          {".:53 {\n kubernetes cluster.local\n}\n}\n", "line 4: unexpected brace"},
		"NUL":                  {".:53 {\n kubernetes \x00\n}\n", "NUL"},
	} {
		if _, err := Parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", name, err, tc.want)
		}
	}
}

// Where the environment is known (a CoreDNS process started here), placeholders are filled as
// CoreDNS fills them; Apply, for a cluster's Corefile, refuses them (served_test.go).
func TestParseFillsPlaceholders(t *testing.T) {
	t.Setenv("ZONE", "example.org")
	t.Setenv("SNIPPET", "common")
	servers, err := Parse("(common) {\n  whoami\n}\n\"{$ZONE}:53\" {\n  import {$SNIPPET}\n  forward {%ZONE%} 10.0.0.1\n}\n")
	if err != nil || len(servers) != 1 || servers[0].Zones()[0] != "example.org" || servers[0].Find("whoami") == nil ||
		servers[0].Find("forward").Args[0] != "example.org" {
		t.Fatalf("err %v servers %+v", err, servers)
	}
}

// A block without braces runs to the end of the Corefile: ours, appended, would be read as part
// of it, so Apply refuses.
func TestApplyRefusesABlockWithoutBraces(t *testing.T) {
	for _, in := range []string{".:53\nkubernetes cluster.local\n", kubeadm + "example.org\n", ".:53 {\n    kubernetes cluster.local {\n}\n"} {
		if out, err := Apply(in, DefaultDomain, up); err == nil || !strings.Contains(err.Error(), "not be a server block of its own") {
			t.Errorf("Apply(%q) = %v\n%s", in, err, out)
		}
	}
}
