package installcmd

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// members serves two members on loopback: ready, nothing else found, and every request that is
// not a read remembered.
func members(t *testing.T) (kubeconfig string, writes func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			mu.Lock()
			seen = append(seen, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		if r.URL.Path == "/readyz" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: member1\nusers:\n- name: u\n  user: {token: t}\nclusters:\n")
	for _, c := range []string{"member1", "member2"} {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q}\n", c, srv.URL)
	}
	b.WriteString("contexts:\n")
	for _, c := range []string{"member1", "member2"} {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: u}\n", c, c)
	}
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// validate runs install's Complete and Validate, as the command does before any write.
func validate(t *testing.T, kubeconfig string, args ...string) error {
	t.Helper()
	t.Setenv(clusterset.EnvContexts, "")
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	flags.Context = new("member1")
	var out bytes.Buffer
	o := &Options{ConfigFlags: flags, IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}}
	cmd := newCmd(o)
	cmd.SetContext(t.Context())
	if err := cmd.ParseFlags(append([]string{"--contexts=member1,member2", "--image=img:1"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(cmd); err != nil {
		t.Fatal(err)
	}
	return o.Validate()
}

func TestLoopbackRefusedBeforeAnyWrite(t *testing.T) {
	kc, writes := members(t)
	err := validate(t, kc)
	if err == nil || !strings.Contains(err.Error(), `cluster "member2": its kubeconfig server http://127.0.0.1:`) ||
		!strings.Contains(err.Error(), `which the sync pods in "member1" cannot reach: pass --member-server=member2=https://ADDRESS:PORT`) {
		t.Errorf("got %v", err)
	}
	if err := validate(t, kc, "--member-server=member2=https://10.0.0.2:6443"); err != nil {
		t.Errorf("with member2's address: %v", err)
	}
	if err := validate(t, kc, "--member-server=member3=https://10.0.0.3:6443", "--member-server=member2=https://10.0.0.2:6443"); err == nil || !strings.Contains(err.Error(), `"member3" is not one of --contexts`) {
		t.Errorf("a context outside the clusterset: %v", err)
	}
	if w := writes(); len(w) != 0 {
		t.Errorf("written while validating: %v", w)
	}
}

// Per member, the user's own credentials would be copied into every member: refused, as is a
// mode install does not know, before any write.
func TestPerMemberRefusals(t *testing.T) {
	kc, writes := members(t)
	servers := []string{"--member-server=member1=https://10.0.0.1:6443", "--member-server=member2=https://10.0.0.2:6443"}
	if err := validate(t, kc, append(servers, "--mode=per-member", "--member-credentials=current")...); err == nil ||
		!strings.Contains(err.Error(), "--member-credentials=current does not go with --mode=per-member") {
		t.Errorf("--member-credentials=current per member: %v", err)
	}
	if err := validate(t, kc, append(servers, "--mode=everywhere")...); err == nil || err.Error() != `--mode "everywhere": must be host or per-member` {
		t.Errorf("--mode=everywhere: %v", err)
	}
	if err := validate(t, kc, append(servers, "--mode=per-member", "--leader-elect-context=member2")...); err == nil ||
		!strings.Contains(err.Error(), "--leader-elect-context does not go with --mode=per-member") {
		t.Errorf("--leader-elect-context per member: %v", err)
	}
	// Every member is reached by the others' pods: member1's loopback address is refused too.
	if err := validate(t, kc, "--mode=per-member", "--member-server=member2=https://10.0.0.2:6443"); err == nil ||
		!strings.Contains(err.Error(), `cluster "member1": its kubeconfig server http://127.0.0.1:`) ||
		!strings.Contains(err.Error(), "which the sync pods of the other members cannot reach: pass --member-server=member1=") {
		t.Errorf("per member, member1 at loopback: %v", err)
	}
	// Both at loopback: one refusal names both.
	if err := validate(t, kc, "--mode=per-member"); err == nil ||
		!strings.HasPrefix(err.Error(), "2 members' kubeconfig servers cannot be reached:\n") ||
		!strings.Contains(err.Error(), "\n  "+`cluster "member1": its kubeconfig server http://127.0.0.1:`) ||
		!strings.Contains(err.Error(), "\n  "+`cluster "member2": its kubeconfig server http://127.0.0.1:`) {
		t.Errorf("per member, both at loopback: %v", err)
	}
	if err := validate(t, kc, append(servers, "--mode=per-member")...); err != nil {
		t.Errorf("per member with every address: %v", err)
	}
	if w := writes(); len(w) != 0 {
		t.Errorf("written while validating: %v", w)
	}
}

// --wait needs a --timeout above 0; --wait=false takes any.
func TestWaitTimeout(t *testing.T) {
	kc, writes := members(t)
	server := "--member-server=member2=https://10.0.0.2:6443"
	if err := validate(t, kc, server, "--timeout=0"); err == nil || err.Error() != "--timeout must be greater than 0 (or pass --wait=false)" {
		t.Errorf("--timeout=0: %v", err)
	}
	for _, args := range [][]string{{"--timeout=0", "--wait=false"}, {"--timeout=30s"}, {}} {
		if err := validate(t, kc, append([]string{server}, args...)...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if w := writes(); len(w) != 0 {
		t.Errorf("written while validating: %v", w)
	}
}
