// Package dnsserver is the I/O of `kubectl mcs dns-server`: one member's ServiceImports and
// the EndpointSlices sync wrote there, kept by informers, answered over UDP and TCP through
// pkg/dnszone. Stock CoreDNS forwards the clusterset zone to it (`init --dns`). It answers
// SERVFAIL until its caches have synced, and keeps answering from them while the apiserver is
// away.
package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dnszone"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// Config is what the server listens on and answers.
type Config struct {
	// Listen is HOST:PORT for both UDP and TCP (PORT 0: any free port, the same for both).
	Listen string
	// HealthAddr serves /healthz and /readyz (ready: caches synced); "" or "0": not served.
	HealthAddr string
	Zone       dnszone.Config
	// Drain is how long the server goes on answering, not ready, once ctx ends: the Service's
	// other replicas take the new queries before this one stops (CoreDNS's lameduck).
	Drain time.Duration
}

// Server answers the zone for one member.
type Server struct {
	cfg    Config
	member *clusterset.Connection
	// source is set once the caches have synced; nil until then (SERVFAIL).
	source atomic.Pointer[caches]
	// draining is set once ctx ended: /readyz fails while the answers go on.
	draining atomic.Bool

	tcp    net.Listener
	udp    net.PacketConn
	health net.Listener
}

// New prepares a server reading member m (its ID names it in errors and logs).
func New(m *clusterset.Connection, cfg Config) *Server {
	return &Server{cfg: cfg, member: m}
}

// Listen binds the DNS address, TCP then UDP on the same port, and the health address, so that a
// taken port fails at once rather than in the background.
func (s *Server) Listen() error {
	host, _, err := net.SplitHostPort(s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", s.cfg.Listen, err)
	}
	if s.tcp, err = net.Listen("tcp", s.cfg.Listen); err != nil {
		return fmt.Errorf("listening on %s: %w", s.cfg.Listen, err)
	}
	port := strconv.Itoa(s.tcp.Addr().(*net.TCPAddr).Port)
	if s.udp, err = net.ListenPacket("udp", net.JoinHostPort(host, port)); err != nil {
		s.tcp.Close()
		return fmt.Errorf("listening on %s/udp: %w", net.JoinHostPort(host, port), err)
	}
	if s.cfg.HealthAddr != "" && s.cfg.HealthAddr != "0" {
		if s.health, err = net.Listen("tcp", s.cfg.HealthAddr); err != nil {
			s.tcp.Close()
			s.udp.Close()
			return fmt.Errorf("listening on %s: %w", s.cfg.HealthAddr, err)
		}
	}
	return nil
}

// Addr is the address the DNS server listens on, UDP and TCP (after Listen).
func (s *Server) Addr() string { return s.tcp.Addr().String() }

// HealthAddr is the address of /healthz and /readyz; "" when not served.
func (s *Server) HealthAddr() string {
	if s.health == nil {
		return ""
	}
	return s.health.Addr().String()
}

// Run serves until ctx ends. The member is read through pkg/member: joined with retries until it
// answers and its caches sync (a member without the mcs-api CRDs is waited for too: the DNS
// server may well be deployed before `kubectl mcs init`), answering SERVFAIL meanwhile; probed
// once joined, so that informers held while it is away relist the moment it returns.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 3)
	stop := s.serve(errc)
	defer stop()
	var m *member.Cache
	var said atomic.Bool
	m = member.New([]*clusterset.Connection{s.member}, member.Config{Kinds: kinds, SliceSelector: sliceSelector, GivenID: true,
		// A short cap: a DNS server that starts answering 15 s after `init` looks broken.
		RetryCap: 2 * time.Second,
		Handlers: member.Handlers{Health: func() {
			if st := m.State(); !st.Joined && errors.As(st.Err, &mcsapi.ErrNotInstalled{}) && !said.Swap(true) {
				klog.InfoS("waiting for the mcs-api CRDs; answering SERVFAIL meanwhile", "cluster", s.member.ID, "fix", shell.MCS("init").String())
			}
		}}})[0]
	// The member is read until the drain ends, not until ctx does: CoreDNS's pooled TCP
	// connections go on reaching a draining replica, and a name created meanwhile must answer.
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		m.Run(mctx)
	}()
	defer func() { cancel(); <-ended }() // nothing of the member's outlives Run
	klog.V(2).InfoS("waiting for the caches to sync", "cluster", s.member.ID)
	if wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return m.State().Joined, nil }) != nil {
		return nil // ctx ended
	}
	c := &caches{m}
	s.source.Store(c)
	klog.V(2).InfoS("caches synced; answering", "cluster", s.member.ID, "zone", s.cfg.Zone.Domain, "listen", s.Addr(),
		"mcsVersion", m.State().Version, "holding", c.String())
	select {
	case <-ctx.Done():
		s.drain()
		return nil
	case err := <-errc:
		return err
	}
}

// drain goes on answering, from caches still watched, for Drain, not ready meanwhile.
func (s *Server) drain() {
	if s.cfg.Drain <= 0 {
		return
	}
	s.draining.Store(true)
	klog.InfoS("draining: answering, not ready", "cluster", s.member.ID, "for", s.cfg.Drain)
	time.Sleep(s.cfg.Drain)
}

// serve starts the DNS servers and the health server; the returned func stops them.
func (s *Server) serve(errc chan<- error) (stop func()) {
	udp := &dns.Server{PacketConn: s.udp, Handler: s}
	tcp := &dns.Server{Listener: s.tcp, Handler: s}
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() {
			if err := srv.ActivateAndServe(); err != nil {
				errc <- fmt.Errorf("serving DNS on %s: %w", s.Addr(), err)
			}
		}()
		<-started // Shutdown of a server not started yet would leave it running
	}
	var health *http.Server
	if s.health != nil {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if s.draining.Load() {
				http.Error(w, "draining", http.StatusServiceUnavailable)
				return
			}
			if s.source.Load() == nil {
				http.Error(w, "caches not synced", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok"))
		})
		health = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := health.Serve(s.health); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serving health probes on %s: %w", s.HealthAddr(), err)
			}
		}()
	}
	return func() {
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
		if health != nil {
			_ = health.Close()
		}
	}
}

// ServeDNS answers one query: SERVFAIL before the caches synced, else from them. An answer is
// truncated to what the transport carries: over UDP the client's EDNS buffer up to 1,232 bytes
// (512 without EDNS; TC makes it retry over TCP), over TCP 65,535 bytes.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	var m *dns.Msg
	if c := s.source.Load(); c != nil {
		m = dnszone.Answer(req, c, s.cfg.Zone)
	} else {
		m = new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
	}
	_, udp := w.RemoteAddr().(*net.UDPAddr)
	dnszone.Fit(m, dnszone.Limit(req, !udp))
	err := w.WriteMsg(m)
	if logger := klog.V(2); logger.Enabled() {
		q := dns.Question{}
		if len(req.Question) > 0 {
			q = req.Question[0]
		}
		logger.InfoS("query", "client", w.RemoteAddr().String(), "name", q.Name, "type", dns.TypeToString[q.Qtype],
			"rcode", dns.RcodeToString[m.Rcode], "answers", len(m.Answer), "truncated", m.Truncated, "err", err)
	}
}
