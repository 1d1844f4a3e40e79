//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/internal/corednshost"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// dnsServerProc is `kubectl mcs dns-server` for one member, on a loopback port of the host.
type dnsServerProc struct {
	addr   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startDNSServer runs the DNS server of member c on a free loopback port, logging every query
// (-v=2), and waits until it answers from synced caches (SERVFAIL before). It is stopped by PID at
// the end of the test; its log is shown when the test failed. args go after dns-server's own.
func startDNSServer(t *testing.T, c string, args ...string) *dnsServerProc {
	t.Helper()
	port, err := corednshost.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &dnsServerProc{addr: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(t.TempDir(), c+"-dns-server.log"), exited: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary, append([]string{"--kubeconfig", kubeconfig, "--context", c, "dns-server", "--listen", p.addr, "-v=2"}, args...)...)
	p.cmd.Env = append(os.Environ(), "KUBECTL_MCS_CONTEXTS=")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	// Its own process group: an interrupted test run does not leave it to signals meant for go test.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("%s: dns-server: %v", c, err)
	}
	go func() {
		_ = p.cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out, _ := os.ReadFile(p.log)
			t.Logf("%s: dns-server log:\n%s", c, out)
		}
	})
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		select {
		case <-p.exited:
			return false, fmt.Errorf("exited")
		default:
		}
		r, err := corednshost.Query(p.addr, "clusterset.local.", dns.TypeSOA)
		return err == nil && r.Rcode == dns.RcodeSuccess, nil
	})
	if err != nil {
		out, _ := os.ReadFile(p.log)
		t.Fatalf("%s: dns-server on %s never answered (%v):\n%s", c, p.addr, err, out)
	}
	t.Logf("%s: dns-server pid %d on %s", c, p.cmd.Process.Pid, p.addr)
	return p
}

// stop ends the process by its PID and waits for it.
func (p *dnsServerProc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// applyDNSServer applies what `dns-server --print-manifests` prints to cluster c and returns the
// Service's ClusterIP. What it created is deleted at the end of the test (the Namespace only when
// it did not exist before).
func applyDNSServer(t *testing.T, c string) string {
	t.Helper()
	_, err := clients[c].kube.CoreV1().Namespaces().Get(context.Background(), names.SystemNamespace, metav1.GetOptions{})
	hadNamespace := err == nil
	f := filepath.Join(t.TempDir(), "dns-server.yaml")
	if err := os.WriteFile(f, []byte(mustMCS(t, "dns-server", "--print-manifests", "--context", c).stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = runKubectl(c, "-n", names.SystemNamespace, "delete", "deployment,service,serviceaccount", names.DNSServerName, "--ignore-not-found")
		_, _ = runKubectl(c, "delete", "clusterrolebinding,clusterrole", names.DNSServerName, "--ignore-not-found")
		if hadNamespace {
			return
		}
		_ = clients[c].kube.CoreV1().Namespaces().Delete(context.Background(), names.SystemNamespace, metav1.DeleteOptions{})
		waitFor(t, c+": namespace "+names.SystemNamespace+" gone", func() bool {
			_, err := clients[c].kube.CoreV1().Namespaces().Get(context.Background(), names.SystemNamespace, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
	if out, err := runKubectl(c, "apply", "--server-side", "-f", f); err != nil {
		t.Fatalf("%s: applying dns-server --print-manifests: %v: %s", c, err, out)
	}
	svc, err := clients[c].kube.CoreV1().Services(names.SystemNamespace).Get(context.Background(), names.DNSServerName, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP == "" {
		t.Fatalf("%s: service %s/%s: %v", c, names.SystemNamespace, names.DNSServerName, err)
	}
	return svc.Spec.ClusterIP
}

// hostPod runs a pod with a hostname under the headless Service app (as a StatefulSet's pod is)
// in cluster c, and returns its IP once it runs.
func hostPod(t *testing.T, c, ns, app, hostname string) string {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: hostname, Namespace: ns, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Hostname: hostname, Subdomain: app, Containers: []corev1.Container{{Name: app, Image: "jeremyot/serve:0a40de8"}}}}
	if _, err := clients[c].kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: creating pod %s/%s: %v", c, ns, hostname, err)
	}
	var ip string
	waitFor(t, c+": pod "+hostname+" running", func() bool {
		p, err := clients[c].kube.CoreV1().Pods(ns).Get(context.Background(), hostname, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			ip = p.Status.PodIP
		}
		return ip != ""
	})
	return ip
}

// waitDNSDiagnosis polls `diagnose --contexts member1` until its dns result for member1 has
// severity sev and a message containing msg; a failure must name the Service and a fix.
func waitDNSDiagnosis(t *testing.T, ns string, sev diagnose.Severity, msg string) {
	t.Helper()
	var last diagnose.Result
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 90*time.Second, true, func(context.Context) (bool, error) {
		r := mcs("diagnose", "--contexts", "member1", "-n", ns, "-o", "json")
		var rep diagnose.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			return false, nil
		}
		for _, x := range rep.Results {
			if x.Check == diagnose.CheckDNS && x.Cluster == "member1" {
				last = x
			}
		}
		return last.Severity == sev && strings.Contains(last.Message, msg), nil
	})
	if err != nil {
		t.Fatalf("diagnose dns in member1: got %s %q, want %s %q", last.Severity, last.Message, sev, msg)
	}
	if sev == diagnose.Fail && (last.Object != "service/"+names.SystemNamespace+"/"+names.DNSServerName || last.Fix == "") {
		t.Errorf("diagnose dns failure must name the Service and a fix: %+v", last)
	}
}
