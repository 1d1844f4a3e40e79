package dns

import (
	"os"
	"strings"
	"testing"
)

// kubeadm is the Corefile kubeadm writes into kube-system/coredns, as the test bed gives it.
var kubeadm = func() string {
	b, err := os.ReadFile("../../test/testbed/kubeadm.Corefile")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestParseKubeadm(t *testing.T) {
	servers, err := Parse(kubeadm)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Port() != "53" || servers[0].Zones()[0] != "." {
		t.Fatalf("servers = %+v", servers)
	}
	k := servers[0].Find("kubernetes")
	if k == nil || strings.Join(k.Args, " ") != "cluster.local in-addr.arpa ip6.arpa" || len(k.Options) != 3 || k.Line != 6 || k.End != 10 {
		t.Fatalf("kubernetes = %+v", k)
	}
	if h := servers[0].Find("health"); h == nil || h.Line != 2 || h.End != 4 {
		t.Fatalf("health = %+v", h)
	}
}

func TestApplyIdempotentAndRemovable(t *testing.T) {
	out, err := Apply(kubeadm, "clusterset.local")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, kubeadm) || !Has(out) {
		t.Fatalf("the original Corefile must be kept as is, with our block after it:\n%s", out)
	}
	for _, want := range []string{
		"clusterset.local:53 {",
		`name regex ^(_[^.]+\._[^.]+\.)?([^.]+)\.([^.]+)\.svc\.clusterset\.local\.$ {1}derived-{2}.{3}.svc.cluster.local.`,
		`answer name ^(_[^.]+\._[^.]+\.)?derived-([^.]+)\.([^.]+)\.svc\.cluster\.local\.$ {1}{2}.{3}.svc.clusterset.local.`,
		`answer value ^derived-([^.]+)\.([^.]+)\.svc\.cluster\.local\.$ {1}.{2}.svc.clusterset.local.`,
		"template ANY ANY clusterset.local {",
		"kubernetes cluster.local {",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	again, err := Apply(out, "clusterset.local")
	if err != nil || again != out {
		t.Fatalf("second Apply changed the Corefile (err %v):\n%s", err, again)
	}
	back, err := Remove(out)
	if err != nil || back != kubeadm {
		t.Fatalf("Remove did not restore the original (err %v):\n%q", err, back)
	}
	if same, _ := Remove(kubeadm); same != kubeadm {
		t.Fatal("Remove of a Corefile without our block must change nothing")
	}
	// A domain change replaces our block in place.
	other, err := Apply(out, "mcs.example.")
	if err != nil || strings.Contains(other, "clusterset.local") || !strings.Contains(other, "mcs.example:53 {") {
		t.Fatalf("domain change: err %v\n%s", err, other)
	}
	if servers, err := Parse(out); err != nil || len(servers) != 2 {
		t.Fatalf("our output must parse into two server blocks: %v %d", err, len(servers))
	}
}

func TestApplyKeepsTextAfterOurBlock(t *testing.T) {
	ours, _ := Apply(kubeadm, "clusterset.local")
	withTail := ours + "example.org:53 {\n    whoami\n}\n"
	out, err := Apply(withTail, "clusterset.local")
	if err != nil || out != withTail {
		t.Fatalf("err %v\n%s", err, out)
	}
	back, _ := Remove(withTail)
	if back != kubeadm+"example.org:53 {\n    whoami\n}\n" {
		t.Fatalf("Remove took more than our block:\n%s", back)
	}
}

func TestApplyCopiesConnectionOptions(t *testing.T) {
	in := "cluster.example:1053 {\n  kubernetes {\n    kubeconfig /k ctx\n    namespaces a b\n    pods verified\n  }\n}\n"
	out, err := Apply(in, "clusterset.local")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clusterset.local:1053 {", "kubernetes cluster.example {", "kubeconfig /k ctx", "namespaces a b", "svc.cluster.example."} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "pods verified") != 1 {
		t.Errorf("only connection options are copied:\n%s", out)
	}
}

func TestApplyRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ corefile, want string }{
		"unbalanced":      {".:53 {\n  kubernetes cluster.local {\n", "cannot parse"},
		"stray brace":     {"}\n.:53 {\n kubernetes cluster.local\n}\n", "cannot parse"},
		"quote":           {".:53 {\n  hosts \"x\n}\n", "cannot parse"},
		"no kubernetes":   {".:53 {\n  forward . 8.8.8.8\n}\n", "no server block uses the kubernetes plugin"},
		"served already":  {kubeadm + "clusterset.local:53 {\n  whoami\n}\n", "zone clusterset.local is already served"},
		"served below":    {kubeadm + "dns://foo.ClusterSet.Local.:53 {\n  whoami\n}\n", "zone foo.clusterset.local is already served"},
		"marker twice":    {kubeadm + BeginMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n", "appears twice"},
		"marker no end":   {kubeadm + BeginMarker + "\n", "do not enclose"},
		"markers swapped": {EndMarker + "\n" + kubeadm + BeginMarker + "\n", "do not enclose"},
		"root kubernetes": {".:53 {\n  kubernetes\n}\n", "serves no cluster domain"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Apply(tc.corefile, "clusterset.local")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Remove(kubeadm + EndMarker + "\n"); err == nil {
		t.Fatal("Remove must refuse broken markers rather than guess")
	}
}

func TestParseSkipsSnippetsAndImports(t *testing.T) {
	in := "(common) {\n  errors\n}\nimport /etc/coredns/custom/*.server\n.:53 {\n  import common\n  kubernetes cluster.local\n}\n"
	servers, err := Parse(in)
	if err != nil || len(servers) != 1 || servers[0].Find("kubernetes") == nil {
		t.Fatalf("err %v servers %+v", err, servers)
	}
}

func TestName(t *testing.T) {
	if got := Name("serve", "demo", "clusterset.local."); got != "serve.demo.svc.clusterset.local" {
		t.Fatal(got)
	}
}

func FuzzApplyRemove(f *testing.F) {
	f.Add(kubeadm)
	f.Add(".:53 {\n kubernetes cluster.local\n}")
	f.Add("(s) {\n}\n" + kubeadm + "example.org {\n whoami\n}\n")
	f.Fuzz(func(t *testing.T, corefile string) {
		out, err := Apply(corefile, DefaultDomain)
		if err != nil {
			return
		}
		if again, err := Apply(out, DefaultDomain); err != nil || again != out {
			t.Fatalf("Apply is not idempotent: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("our output does not parse: %v", err)
		}
		back, err := Remove(out)
		if err != nil {
			t.Fatal(err)
		}
		want := corefile
		if Has(corefile) {
			want, _ = Remove(corefile)
		}
		if want != "" && !strings.HasSuffix(want, "\n") && !Has(corefile) {
			want += "\n"
		}
		if back != want && !Has(corefile) {
			t.Fatalf("Remove(Apply(x)) = %q, want %q", back, want)
		}
	})
}
