package corefile

import (
	"errors"
	"strings"
	"testing"
)

// dotBlock is kubeadm's Corefile with line added to its "." block, after the kubernetes stanza.
func dotBlock(line string) string {
	return strings.Replace(kubeadm, "    prometheus :9153\n", "    "+line+"\n    prometheus :9153\n", 1)
}

// quotedKubeadm is kubeadm's Corefile with its kubernetes zone quoted, as CoreDNS reads it too.
var quotedKubeadm = strings.Replace(kubeadm, "kubernetes cluster.local in-addr.arpa ip6.arpa", `kubernetes "cluster.local" in-addr.arpa ip6.arpa`, 1)

// snippetKubeadm is kubeadm's Corefile with its kubernetes stanza moved to a snippet it imports.
var snippetKubeadm = "(k8s) {\n    kubernetes \"cluster.local\" in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n}\n" +
	strings.Replace(kubeadm, "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n       fallthrough in-addr.arpa ip6.arpa\n       ttl 30\n    }\n", "    import k8s\n", 1)

// Everything init --dns refuses: a domain the Corefile serves, part of it, or one holding a zone
// it serves, outside our block (served.go's rule). Nothing is returned with the error.
func TestApplyRefusesADomainAlreadyServed(t *testing.T) {
	for _, tc := range []struct {
		name, corefile, domain, zone, block, plugin, msg string
	}{
		{"kubeadm cluster.local", kubeadm, "cluster.local", "cluster.local", ".:53", "kubernetes",
			`already serves "cluster.local" (server block ".:53", plugin kubernetes)`},
		{"kubeadm svc.cluster.local", kubeadm, "svc.cluster.local", "cluster.local", ".:53", "kubernetes",
			`already serves "svc.cluster.local" as part of "cluster.local" (server block ".:53", plugin kubernetes)`},
		{"kubeadm local", kubeadm, "local", "cluster.local", ".:53", "kubernetes",
			`already serves "cluster.local", inside "local" (server block ".:53", plugin kubernetes)`},
		{"kubeadm in-addr.arpa", kubeadm, "in-addr.arpa", "in-addr.arpa", ".:53", "kubernetes", ""},
		{"kubeadm 10.in-addr.arpa", kubeadm, "10.in-addr.arpa", "in-addr.arpa", ".:53", "kubernetes",
			`already serves "10.in-addr.arpa" as part of "in-addr.arpa" (server block ".:53", plugin kubernetes)`},
		{"kubeadm ip6.arpa", kubeadm, "ip6.arpa", "ip6.arpa", ".:53", "kubernetes", ""},
		{"kubeadm arpa", kubeadm, "arpa", "in-addr.arpa", ".:53", "kubernetes", ""},
		{"multicluster in the root block", dotBlock("multicluster clusterset.local"), DefaultDomain, DefaultDomain, ".:53", "multicluster",
			`already serves "clusterset.local" (server block ".:53", plugin multicluster)`},
		{"rewrite name suffix", dotBlock("rewrite name suffix .clusterset.local .svc.cluster.local answer auto"), DefaultDomain, DefaultDomain, ".:53", "rewrite", ""},
		{"rewrite name regex", dotBlock(`rewrite name regex (.*)\.clusterset\.local {1}.svc.cluster.local`), DefaultDomain, DefaultDomain, ".:53", "rewrite", ""},
		{"rewrite block", dotBlock("rewrite stop {\n        name regex ^(.*)\\.svc\\.clusterset\\.local\\.?$ {1}.svc.cluster.local\n        answer name ^(.*)\\.svc\\.cluster\\.local\\.?$ {1}.svc.clusterset.local\n    }"),
			DefaultDomain, "svc.clusterset.local", ".:53", "rewrite", ""},
		{"rewrite of a parent", dotBlock("rewrite name suffix .local .cluster.local"), DefaultDomain, "local", ".:53", "rewrite", ""},
		{"forward FROM the domain", strings.Replace(kubeadm, "forward . /etc/resolv.conf", "forward clusterset.local 1.2.3.4", 1), DefaultDomain, DefaultDomain, ".:53", "forward",
			`already serves "clusterset.local" (server block ".:53", plugin forward)`},
		{"forward FROM a subdomain", strings.Replace(kubeadm, "forward . /etc/resolv.conf", "forward east.ClusterSet.Local. 1.2.3.4", 1), DefaultDomain, "east.clusterset.local", ".:53", "forward", ""},
		{"file", dotBlock("file /etc/coredns/db.clusterset clusterset.local"), DefaultDomain, DefaultDomain, ".:53", "file", ""},
		{"hosts", dotBlock("hosts /etc/coredns/hosts clusterset.local"), DefaultDomain, DefaultDomain, ".:53", "hosts", ""},
		{"kubernetes CIDR zone", strings.Replace(kubeadm, "kubernetes cluster.local in-addr.arpa ip6.arpa", "kubernetes cluster.local 10.96.0.0/16", 1), "10.in-addr.arpa", "96.10.in-addr.arpa", ".:53", "kubernetes", ""},
		{"a block of someone else", kubeadm + "clusterset.local:53 {\n    whoami\n}\n", DefaultDomain, DefaultDomain, "clusterset.local:53", "",
			`already serves "clusterset.local" (server block "clusterset.local:53")`},
		{"a block on another port", kubeadm + "clusterset.local:1053 {\n    whoami\n}\n", DefaultDomain, DefaultDomain, "clusterset.local:1053", "", ""},
		{"a block below", kubeadm + "dns://foo.ClusterSet.Local.:53 {\n    whoami\n}\n", DefaultDomain, "foo.clusterset.local", "dns://foo.ClusterSet.Local.:53", "",
			`already serves "foo.clusterset.local", inside "clusterset.local" (server block "dns://foo.ClusterSet.Local.:53")`},
		{"a block above", kubeadm + "local:53 {\n    forward . 10.0.0.1\n}\n", DefaultDomain, "local", "local:53", "", ""},
		{"the cluster's own block", "cluster.local:53 {\n    kubernetes\n}\n.:53 {\n    forward . /etc/resolv.conf\n}\n", "svc.cluster.local", "cluster.local", "cluster.local:53", "", ""},
		{"one of a block's keys", kubeadm + "clusterset.local, example.org {\n    whoami\n}\n", DefaultDomain, DefaultDomain, "clusterset.local example.org", "", ""},
		// Read as CoreDNS reads them: quotes, snippets and imports, grpc.
		{"quoted kubernetes cluster.local", quotedKubeadm, "cluster.local", "cluster.local", ".:53", "kubernetes",
			`already serves "cluster.local" (server block ".:53", plugin kubernetes)`},
		{"quoted kubernetes local", quotedKubeadm, "local", "cluster.local", ".:53", "kubernetes", ""},
		{"quoted kubernetes svc.cluster.local", quotedKubeadm, "svc.cluster.local", "cluster.local", ".:53", "kubernetes", ""},
		{"kubernetes in a snippet", snippetKubeadm, "svc.cluster.local", "cluster.local", ".:53", "kubernetes", ""},
		{"quoted block key", kubeadm + "\"clusterset.local:53\" {\n    whoami\n}\n", DefaultDomain, DefaultDomain, "clusterset.local:53", "",
			`already serves "clusterset.local" (server block "clusterset.local:53")`},
		{"a block a snippet brings", "(blk) {\n  clusterset.local {\n    whoami\n  }\n}\n" + kubeadm + "import blk\n", DefaultDomain, DefaultDomain, "clusterset.local", "", ""},
		{"grpc FROM the domain", kubeadm + "example.org:53 {\n    grpc clusterset.local 10.0.0.1:53\n}\n", DefaultDomain, DefaultDomain, "example.org:53", "grpc",
			`already serves "clusterset.local" (server block "example.org:53", plugin grpc)`},
		{"grpc FROM a subdomain", dotBlock("grpc east.clusterset.local 10.0.0.1:53"), DefaultDomain, "east.clusterset.local", ".:53", "grpc", ""},
		{"an IPv6 CIDR key", "fd00::/8 {\n    whoami\n}\n" + kubeadm, "e.d.f.ip6.arpa", "d.f.ip6.arpa", "fd00::/8", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Apply(tc.corefile, tc.domain, up)
			var se *ServedError
			if !errors.As(err, &se) || out != "" {
				t.Fatalf("Apply(%s) = %v, want a *ServedError and no Corefile:\n%s", tc.domain, err, out)
			}
			if want := (ServedError{Domain: tc.domain, Zone: tc.zone, Block: tc.block, Plugin: tc.plugin}); *se != want {
				t.Errorf("got %+v, want %+v", *se, want)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err, tc.msg)
			}
		})
	}
}

func TestApplyAcceptsWhatNoOneServes(t *testing.T) {
	for _, tc := range []struct{ name, corefile, domain string }{
		{"kubeadm", kubeadm, DefaultDomain},
		{"kubeadm example.org", kubeadm, "example.org"},
		{"a sibling of cluster.local", kubeadm, "xcluster.local"},
		{"rewrite elsewhere", dotBlock("rewrite name exact foo.example.org bar.example.org"), DefaultDomain},
		{"forward of the root", strings.Replace(kubeadm, "forward . /etc/resolv.conf", "forward . 8.8.8.8 1.1.1.1", 1), DefaultDomain},
		{"kubernetes of the root", ".:53 {\n    kubernetes\n}\n", DefaultDomain},
		{"another zone's block", kubeadm + "example.org:53 {\n    whoami\n}\n", DefaultDomain},
		{"quoted kubeadm", quotedKubeadm, DefaultDomain},
		{"kubernetes in a snippet", snippetKubeadm, DefaultDomain},
		{"grpc of the root", dotBlock("grpc . 10.0.0.1:53"), DefaultDomain},
		{"a placeholder that names no zone", strings.Replace(kubeadm, "forward . /etc/resolv.conf", "forward . {$UPSTREAM}", 1), DefaultDomain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Apply(tc.corefile, tc.domain, up)
			if err != nil || !strings.HasPrefix(out, tc.corefile) {
				t.Fatalf("Apply(%s) = %v\n%s", tc.domain, err, out)
			}
			// Our own block, whatever it forwards to, is no reason to refuse: it is replaced in place.
			moved, err := Apply(out, tc.domain, Upstream{Addr: "127.0.0.1:5353"})
			if err != nil || !strings.Contains(moved, "forward . 127.0.0.1:5353 {\n        force_tcp\n    }\n") || strings.Count(moved, BeginMarker) != 1 {
				t.Fatalf("re-Apply = %v\n%s", err, moved)
			}
			if again, err := Apply(moved, tc.domain, Upstream{Addr: "127.0.0.1:5353"}); err != nil || again != moved {
				t.Fatalf("Apply is not idempotent: %v\n%s", err, again)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Cluster.Local.": "cluster.local", "": ".", ".": ".", "10.0.0.0/8": "10.in-addr.arpa",
		"10.96.0.0/12": "10.in-addr.arpa", "192.168.1.0/24": "1.168.192.in-addr.arpa", "fd00::/8": "d.f.ip6.arpa",
		"fd00:10:96::/48": "6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		".clusterset.local": "clusterset.local", `(.*)\.clusterset\.local`: "clusterset.local", "{1}.clusterset.local": "clusterset.local",
		`^(.*)\.svc\.clusterset\.local\.?$`: "svc.clusterset.local", "(.*)": "", "suffix": "", "answer": "", ".": "",
	} {
		if got := nameIn(in); got != want {
			t.Errorf("nameIn(%q) = %q, want %q", in, got, want)
		}
	}
}

// A zone that a placeholder names is filled from the CoreDNS pod's environment, which init cannot
// see: refused whatever this process's environment holds, naming the placeholder as written.
func TestApplyRefusesAZoneNamedByAPlaceholder(t *testing.T) {
	t.Setenv("ZONE", "example.org")
	for _, tc := range []struct{ name, corefile, want string }{
		{"block key", kubeadm + "{$ZONE}:53 {\n    whoami\n}\n",
			`server block "{$ZONE}:53": "{$ZONE}:53" holds a placeholder, filled from the CoreDNS pod's environment: whether it overlaps the domain cannot be told here`},
		{"windows block key", kubeadm + "\"{%ZONE%}.local\" {\n    whoami\n}\n", `server block "{%ZONE%}.local": "{%ZONE%}.local" holds a placeholder`},
		{"kubernetes zone", strings.Replace(kubeadm, "kubernetes cluster.local", "kubernetes {$ZONE}", 1),
			`server block ".:53", plugin kubernetes: "{$ZONE}" holds a placeholder`},
		{"forward FROM", strings.Replace(kubeadm, "forward . /etc/resolv.conf", "forward {$ZONE} 10.0.0.1", 1), `server block ".:53", plugin forward: "{$ZONE}" holds`},
		{"rewrite", dotBlock("rewrite name suffix .{$ZONE} .cluster.local"), `server block ".:53", plugin rewrite: ".{$ZONE}" holds`},
		{"plugin", dotBlock("{$PLUGIN} clusterset.local"), `server block ".:53": the plugin "{$PLUGIN}" is a placeholder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Apply(tc.corefile, DefaultDomain, up)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || out != "" {
				t.Fatalf("err = %v, want %q and no Corefile:\n%s", err, tc.want, out)
			}
			if se := (*ServedError)(nil); errors.As(err, &se) {
				t.Errorf("a placeholder is no ServedError (init would say to pick another domain): %v", err)
			}
		})
	}
}
