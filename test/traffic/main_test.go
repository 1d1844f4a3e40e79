//go:build traffic

// Package traffic sends real packets across the clusterset: the test bed's clusters have real
// nodes (test/testbed/node.sh: containerd, kubelet, kube-proxy and CoreDNS, pod CIDRs routed to
// each other), the servers are real pods (test/images/echo, which answers with its pod and
// cluster), and every request is made from a pod in another cluster, through kube-proxy's rules
// for the derived Service and through the clusterset DNS that `kubectl mcs init --dns` wires.
// `make test-traffic` starts the bed and sets the variables read here.
package traffic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig = os.Getenv("TRAFFIC_KUBECONFIG")
	binary     = os.Getenv("TRAFFIC_BINARY")
	image      = os.Getenv("TRAFFIC_IMAGE")
	dnsServer  = os.Getenv("TRAFFIC_DNS_SERVER")
	// member1 and member3 serve, member2 asks: the seed scenario's roles.
	members  = []string{"member1", "member2", "member3"}
	consumer = "member2"
	clients  = map[string]kubernetes.Interface{}
)

func TestMain(m *testing.M) {
	if why := os.Getenv("TRAFFIC_SKIP"); why != "" {
		fmt.Println("traffic: skipped:", why)
		os.Exit(0)
	}
	if kubeconfig == "" || binary == "" || image == "" || (dnsServer == "" && !production) {
		fmt.Fprintln(os.Stderr, "traffic: TRAFFIC_KUBECONFIG, TRAFFIC_BINARY, TRAFFIC_IMAGE and TRAFFIC_DNS_SERVER must be set (run: make test-traffic)")
		os.Exit(1)
	}
	for _, c := range members {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		if err != nil {
			fmt.Fprintf(os.Stderr, "traffic: context %s: %v\n", c, err)
			os.Exit(1)
		}
		clients[c] = kubernetes.NewForConfigOrDie(cfg)
	}
	if production {
		if err := deployProduction(); err != nil {
			fmt.Fprintln(os.Stderr, "traffic: the production path:", err)
			productionLogs()
			os.Exit(1)
		}
		code := m.Run()
		if code != 0 {
			productionLogs()
		}
		os.Exit(code)
	}
	all := strings.Join(members, ",")
	for _, args := range [][]string{
		{"init", "--contexts", all},
		{"init", "--contexts", all, "--dns", "--dns-server", dnsServer},
	} {
		if r := mcs(args...); r.code != 0 {
			fmt.Fprintf(os.Stderr, "traffic: kubectl mcs %s: %s\n", strings.Join(args, " "), r.stderr)
			os.Exit(1)
		}
	}
	// One controller for the whole clusterset, as in production.
	sync := exec.Command(binary, "--kubeconfig", kubeconfig, "sync", "--watch", "--contexts", all)
	var syncLog bytes.Buffer
	sync.Stdout, sync.Stderr = &syncLog, &syncLog
	if err := sync.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "traffic: sync --watch:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = sync.Process.Signal(syscall.SIGTERM)
	_ = sync.Wait()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- sync --watch output\n%s\n", tail(syncLog.String(), 60))
	}
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// mcs runs the plugin binary against the test bed.
func mcs(args ...string) result {
	return run(nil, binary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// kubectl runs kubectl in one cluster of the test bed.
func kubectl(stdin []byte, ctx string, args ...string) result {
	return run(stdin, "kubectl", append([]string{"--kubeconfig", kubeconfig, "--context", ctx}, args...)...)
}

func run(stdin []byte, name string, args ...string) result {
	return runWithin(2*time.Minute, stdin, name, args...)
}

// runWithin is run, killed after limit.
func runWithin(limit time.Duration, stdin []byte, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECTL_MCS_CONTEXTS=")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return result{out.String(), errb.String(), code}
}

func must(t *testing.T, r result, what string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d: %s%s", what, r.code, r.stdout, r.stderr)
	}
	return r
}

// eventually retries cond until it holds, and fails the test with its last word otherwise.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
