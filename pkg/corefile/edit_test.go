package corefile

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

// up is the DNS server address of the tests: the kubectl-mcs-dns Service's ClusterIP.
var up = Upstream{Addr: "10.96.0.53", Service: "kubectl-mcs-system/kubectl-mcs-dns"}

func TestApplyIdempotentAndRemovable(t *testing.T) {
	out, err := Apply(kubeadm, "clusterset.local", up)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/kubeadm-clusterset.Corefile")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(golden) {
		t.Fatalf("Apply(kubeadm) differs from testdata/kubeadm-clusterset.Corefile:\n%s", out)
	}
	if !strings.HasPrefix(out, kubeadm) || !Has(out) {
		t.Fatalf("the original Corefile must be kept as is, with our block after it:\n%s", out)
	}
	again, err := Apply(out, "clusterset.local", up)
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
	// A domain or address change replaces our block in place.
	other, err := Apply(out, "mcs.example.", Upstream{Addr: "127.0.0.1:5353"})
	if err != nil || strings.Contains(other, "clusterset.local") || !strings.Contains(other, "mcs.example:53 {") ||
		!strings.Contains(other, "    forward . 127.0.0.1:5353 {\n        force_tcp\n    }\n}") || strings.Count(other, BeginMarker) != 1 {
		t.Fatalf("domain change: err %v\n%s", err, other)
	}
	if servers, err := Parse(out); err != nil || len(servers) != 2 || servers[1].Find("forward") == nil {
		t.Fatalf("our output must parse into two server blocks: %v %+v", err, servers)
	}
}

func TestForward(t *testing.T) {
	out, _ := Apply(kubeadm, DefaultDomain, up)
	got, err := Forward(out)
	if err != nil || got != (Upstream{Addr: "10.96.0.53:53", Service: "kubectl-mcs-system/kubectl-mcs-dns"}) {
		t.Fatalf("Forward = %+v, %v", got, err)
	}
	out, _ = Apply(kubeadm, DefaultDomain, Upstream{Addr: "[fd00::53]:5353"})
	if got, err := Forward(out); err != nil || got != (Upstream{Addr: "[fd00::53]:5353"}) {
		t.Fatalf("Forward = %+v, %v", got, err)
	}
	if _, err := Forward(kubeadm); err == nil {
		t.Error("a Corefile without our block forwards nowhere")
	}
	old := kubeadm + BeginMarker + "\nclusterset.local:53 {\n    rewrite stop {\n    }\n}\n" + EndMarker + "\n"
	if _, err := Forward(old); err == nil || !strings.Contains(err.Error(), "no forward line") {
		t.Errorf("a block without forward: %v", err)
	}
}

func TestParseUpstream(t *testing.T) {
	for in, want := range map[string]string{
		"10.96.0.53": "10.96.0.53:53", "127.0.0.1:5353": "127.0.0.1:5353", "fd00::53": "[fd00::53]:53",
		"[fd00::53]:5353": "[fd00::53]:5353", "::ffff:10.0.0.1": "10.0.0.1:53",
	} {
		if got, err := ParseUpstream(in); err != nil || got != want {
			t.Errorf("ParseUpstream(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "kubectl-mcs-dns.kubectl-mcs-system", "dns.example:53", "10.0.0.1:0", "10.0.0.1:65536", "10.0.0.1:x", "fe80::1%eth0", "10.0.0.1:53:53"} {
		if got, err := ParseUpstream(in); err == nil {
			t.Errorf("ParseUpstream(%q) = %q, want an error", in, got)
		}
	}
	if _, err := Apply(kubeadm, DefaultDomain, Upstream{Addr: "dns.example"}); err == nil {
		t.Error("Apply must refuse a host name")
	}
}

func TestApplyKeepsTextAfterOurBlock(t *testing.T) {
	ours, _ := Apply(kubeadm, "clusterset.local", up)
	withTail := ours + "example.org:53 {\n    whoami\n}\n"
	out, err := Apply(withTail, "clusterset.local", up)
	if err != nil || out != withTail {
		t.Fatalf("err %v\n%s", err, out)
	}
	back, _ := Remove(withTail)
	if back != kubeadm+"example.org:53 {\n    whoami\n}\n" {
		t.Fatalf("Remove took more than our block:\n%s", back)
	}
}

func TestApplyTakesTheClusterBlocksPort(t *testing.T) {
	in := "example.org:53 {\n  whoami\n}\ncluster.example:1053 {\n  kubernetes {\n    kubeconfig /k ctx\n  }\n}\n"
	out, err := Apply(in, "clusterset.local", Upstream{Addr: "127.0.0.1:5353"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "clusterset.local:1053 {\n    errors\n    cache 5 {\n        disable denial\n    }\n    forward . 127.0.0.1:5353 {\n        force_tcp\n    }\n}\n"+EndMarker+"\n") {
		t.Errorf("our block must listen on the kubernetes block's port:\n%s", out)
	}
	if strings.Count(out, "kubeconfig") != 1 {
		t.Errorf("nothing of the cluster's kubernetes stanza is copied:\n%s", out)
	}
}

func TestApplyRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ corefile, want string }{
		"unbalanced":      {".:53 {\n  kubernetes cluster.local {\n", "cannot parse"},
		"stray brace":     {"}\n.:53 {\n kubernetes cluster.local\n}\n", "cannot parse"},
		"quote":           {".:53 {\n  hosts \"x\n}\n", "cannot parse"},
		"no kubernetes":   {".:53 {\n  forward . 8.8.8.8\n}\n", "no server block uses the kubernetes plugin"},
		"served already":  {kubeadm + "clusterset.local:53 {\n  whoami\n}\n", `already serves "clusterset.local"`},
		"served below":    {kubeadm + "dns://foo.ClusterSet.Local.:53 {\n  whoami\n}\n", `already serves "foo.clusterset.local", inside`},
		"marker twice":    {kubeadm + BeginMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n", "appears twice"},
		"marker no end":   {kubeadm + BeginMarker + "\n", "do not enclose"},
		"markers swapped": {EndMarker + "\n" + kubeadm + BeginMarker + "\n", "do not enclose"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Apply(tc.corefile, "clusterset.local", up)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Remove(kubeadm + EndMarker + "\n"); err == nil {
		t.Fatal("Remove must refuse broken markers rather than guess")
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
	f.Add(dotBlock("multicluster clusterset.local"))
	f.Add(dotBlock(`rewrite name regex (.*)\.clusterset\.local {1}.svc.cluster.local`))
	f.Add(quotedKubeadm)
	f.Add(snippetKubeadm)
	f.Add("import /etc/coredns/custom/*.server\n" + dotBlock("grpc example.org 10.0.0.1"))
	f.Add(dotBlock("forward {$ZONE} 10.0.0.1") + "\"{%ZONE%}:53\" {\n whoami\n}\n")
	f.Fuzz(func(t *testing.T, corefile string) {
		out, err := Apply(corefile, DefaultDomain, up)
		if err != nil {
			return
		}
		if got, err := Forward(out); err != nil || got.Addr != "10.96.0.53:53" {
			t.Fatalf("Forward(Apply(x)) = %+v, %v", got, err)
		}
		if again, err := Apply(out, DefaultDomain, up); err != nil || again != out {
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
