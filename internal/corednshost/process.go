package corednshost

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// Process is one CoreDNS process on 127.0.0.1:Port.
type Process struct {
	Addr string
	cmd  *exec.Cmd
	log  string
}

// Binary is where test/testbed/build.sh puts CoreDNS (KUBECTL_MCS_CACHE moves the cache).
func Binary() string {
	cache := os.Getenv("KUBECTL_MCS_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "kubectl-mcs")
	}
	v := os.Getenv("COREDNS_VERSION")
	if v == "" {
		v = "v1.15.0"
	}
	return filepath.Join(cache, "bin", "coredns-"+v, "coredns")
}

// FreePort returns a port free for both TCP and UDP on 127.0.0.1 at the time of asking.
func FreePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no port free for both TCP and UDP")
}

// Start runs binary with corefile (written into dir) and waits until it answers on addr. The
// Corefile must already listen on port (see ForHost).
func Start(ctx context.Context, binary, dir, corefile string, port int, timeout time.Duration) (*Process, error) {
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "coredns.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(binary, "-conf", conf)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	// Its own process group: an interrupted test run does not leave it to signals meant for go test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, log: logPath}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(timeout)
	for {
		// The kubernetes plugin answers only once its informers synced: wait for cluster.local's SOA.
		if r, err := Query(p.Addr, "cluster.local.", dns.TypeSOA); err == nil && r.Rcode == dns.RcodeSuccess {
			go func() { <-exited }()
			return p, nil
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("coredns exited (%v): %s", err, out)
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("coredns on %s did not answer within %s: %s", p.Addr, timeout, out)
		}
	}
}

// PID is the process's ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop ends the process by its PID.
func (p *Process) Stop() {
	_ = p.cmd.Process.Kill()
}

// Query asks addr one question over UDP (TCP when the answer was truncated).
func Query(addr, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 3 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, addr)
	}
	return r, err
}
