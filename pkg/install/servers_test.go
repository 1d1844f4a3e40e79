package install

import (
	"maps"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestParseMemberServers(t *testing.T) {
	got, err := ParseMemberServers([]string{"member2=https://10.0.0.2:6443", " member3=https://[fd00::3]:6443/prefix"})
	want := map[string]string{"member2": "https://10.0.0.2:6443", "member3": "https://[fd00::3]:6443/prefix"}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if got, err := ParseMemberServers(nil); err != nil || len(got) != 0 {
		t.Errorf("none: %v, %v", got, err)
	}
	for in, msg := range map[string]string{
		"member2":                "want CTX=URL",
		"=https://a:1":           "want CTX=URL",
		"member2=":               "want CTX=URL",
		"member2=10.0.0.2:6443":  "not an http(s) URL",
		"member2=ftp://10.0.0.2": "not an http(s) URL",
		"member2=https://":       "not an http(s) URL",
	} {
		if _, err := ParseMemberServers([]string{in}); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), in) {
			t.Errorf("%q: %v, want an error with %q naming it", in, err, msg)
		}
	}
	if _, err := ParseMemberServers([]string{"m=https://a:1", "m=https://b:1"}); err == nil || !strings.Contains(err.Error(), `"m" given twice`) {
		t.Errorf("a context twice: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	for server, want := range map[string]string{
		"https://127.0.0.1:32801":          "loopback",
		"https://127.45.0.9:6443":          "loopback",
		"https://[::1]:6443":               "loopback",
		"https://localhost:6443":           "loopback",
		"https://LOCALHOST.:6443":          "loopback",
		"https://api.localhost":            "loopback",
		"https://[::ffff:127.0.0.1]:6443":  "loopback",
		"https://169.254.10.1:6443":        "link-local",
		"https://[fe80::1]:6443":           "link-local",
		"https://[febf::1]:6443":           "link-local",
		"https://0.0.0.0:6443":             "unspecified",
		"https://[::]:6443":                "unspecified",
		"https://10.0.0.2:6443":            "",
		"https://192.0.2.2:6443":           "",
		"https://[fd00::2]:6443":           "",
		"https://[fec0::1]:6443":           "",
		"https://128.0.0.1:6443":           "",
		"https://169.255.0.1:6443":         "",
		"https://kubernetes.default.svc":   "",
		"https://mylocalhost:6443":         "",
		"https://api.example.com/prefix":   "",
		"https://kubernetes.default.svc:1": "",
		// Without a scheme, as client-go reads them: https://HOST:PORT (issue 49).
		"127.0.0.1:6443":       "loopback",
		"localhost:6443":       "loopback",
		"[::1]:6443":           "loopback",
		"0.0.0.0:6443":         "unspecified",
		"169.254.1.1:6443":     "link-local",
		"127.0.0.1":            "loopback",
		"10.0.0.2:6443":        "",
		"api.example.com:6443": "",
		"[fd00::2]:6443":       "",
		"":                     "",
	} {
		if got := Unreachable(server); got != want {
			t.Errorf("Unreachable(%s) = %q, want %q", server, got, want)
		}
	}
}

func TestServers(t *testing.T) {
	members := []ServerOf{
		{Context: "ctx1", ID: "member1", Server: "https://127.0.0.1:32800"},
		{Context: "ctx2", ID: "member2", Server: "https://10.0.0.2:6443"},
		{Context: "ctx3", ID: "member3", Server: "https://127.0.0.1:32802"},
	}
	// The host's own loopback is replaced by the in-cluster address; another member's is refused,
	// naming it, its server, the host and the flag.
	_, _, err := Servers("ctx1", members, nil)
	want := `cluster "member3": its kubeconfig server https://127.0.0.1:32802 is a loopback address, which the sync pods in "ctx1" cannot reach: pass --member-server=ctx3=https://ADDRESS:PORT`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	got, warnings, err := Servers("ctx1", members, map[string]string{"ctx3": "https://10.0.0.3:6443"})
	if err != nil || len(warnings) != 0 || !maps.Equal(got, map[string]string{"member1": InClusterServer, "member2": "", "member3": "https://10.0.0.3:6443"}) {
		t.Errorf("got %v %v %v", got, warnings, err)
	}
	// Given explicitly, an unreachable address is taken, with a warning; the host's too.
	got, warnings, err = Servers("ctx1", members, map[string]string{"ctx1": "https://[fe80::1]:6443", "ctx3": "https://127.0.0.1:32802"})
	if err != nil || got["member1"] != "https://[fe80::1]:6443" || got["member3"] != "https://127.0.0.1:32802" || len(warnings) != 2 ||
		!strings.Contains(strings.Join(warnings, "\n"), `cluster "member3": --member-server=ctx3=https://127.0.0.1:32802 is a loopback address, which the sync pods in "ctx1" cannot reach`) {
		t.Errorf("got %v %q %v", got, warnings, err)
	}
	// Every member at fault in one error, a line each, scheme-less servers among them.
	two := []ServerOf{members[0], {Context: "ctx2", ID: "member2", Server: "localhost:6443"}, {Context: "ctx3", ID: "member3", Server: "[::1]:6443"},
		{Context: "ctx4", ID: "member4", Server: "api.example.com:6443"}}
	_, _, err = Servers("ctx1", two, nil)
	want = "2 members' kubeconfig servers cannot be reached:\n" +
		`  cluster "member2": its kubeconfig server localhost:6443 is a loopback address, which the sync pods in "ctx1" cannot reach: pass --member-server=ctx2=https://ADDRESS:PORT` + "\n" +
		`  cluster "member3": its kubeconfig server [::1]:6443 is a loopback address, which the sync pods in "ctx1" cannot reach: pass --member-server=ctx3=https://ADDRESS:PORT`
	if err == nil || err.Error() != want {
		t.Errorf("two members at fault: got\n%v\nwant\n%s", err, want)
	}
	// A host outside the clusterset: every member is judged.
	if _, _, err := Servers("elsewhere", members[1:2], nil); err != nil {
		t.Errorf("a reachable member: %v", err)
	}
	if _, _, err := Servers("elsewhere", members[:1], nil); err == nil || !strings.Contains(err.Error(), `cluster "member1"`) {
		t.Errorf("the first member, not the host: %v", err)
	}
	if _, _, err := Servers("ctx1", members, map[string]string{"ctx3": "https://10.0.0.3:1", "ctx9": "https://a:1"}); err == nil || !strings.Contains(err.Error(), `"ctx9" is not one of --contexts`) {
		t.Errorf("a context outside the clusterset: %v", err)
	}
}

// The kubeconfigs embed the address decided, with the same CA and TLS settings; the host's own
// apiserver from inside (InClusterServer) with the token Secret's CA and no TLS server name.
func TestKubeconfigAtAddress(t *testing.T) {
	user := &rest.Config{Host: "https://proxy.example.com:443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("proxy CA"), ServerName: "proxy.example.com"}}
	for _, tc := range []struct{ address, server, ca, name string }{
		{InClusterServer, InClusterServer, "secret CA", ""},
		{"https://10.0.0.1:6443", "https://10.0.0.1:6443", "proxy CA", "proxy.example.com"},
		{"", "https://proxy.example.com:443", "proxy CA", "proxy.example.com"},
	} {
		b, err := TokenKubeconfig("m1", user, tc.address, []byte("secret CA"), "tok")
		if err != nil {
			t.Fatal(err)
		}
		c, _ := clientcmd.Load(b)
		if cl := c.Clusters["m1"]; cl.Server != tc.server || string(cl.CertificateAuthorityData) != tc.ca || cl.TLSServerName != tc.name || cl.InsecureSkipTLSVerify || c.AuthInfos["m1"].Token != "tok" {
			t.Errorf("at %q: cluster %+v, want server %s, CA %q, TLS server name %q", tc.address, cl, tc.server, tc.ca, tc.name)
		}
	}
	// In-cluster, the user's insecure-skip-tls-verify is not carried either: the CA is known.
	b, _ := TokenKubeconfig("m1", &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, InClusterServer, []byte("secret CA"), "tok")
	c, _ := clientcmd.Load(b)
	if cl := c.Clusters["m1"]; cl.InsecureSkipTLSVerify || string(cl.CertificateAuthorityData) != "secret CA" {
		t.Errorf("in-cluster from an insecure context: %+v", cl)
	}
	raw := clientcmdapi.Config{
		Clusters:  map[string]*clientcmdapi.Cluster{"kind-a": {Server: "https://127.0.0.1:1", CertificateAuthorityData: []byte("CA")}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {Token: "t"}},
		Contexts:  map[string]*clientcmdapi.Context{"a": {Cluster: "kind-a", AuthInfo: "admin"}},
	}
	b, err := CurrentKubeconfig(raw, "a", "member-a", "https://10.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	c, _ = clientcmd.Load(b)
	if cl := c.Clusters["member-a"]; cl.Server != "https://10.0.0.1:6443" || string(cl.CertificateAuthorityData) != "CA" {
		t.Errorf("current kubeconfig cluster %+v", cl)
	}
	if raw.Clusters["kind-a"].Server != "https://127.0.0.1:1" {
		t.Error("the user's kubeconfig was changed")
	}
}
