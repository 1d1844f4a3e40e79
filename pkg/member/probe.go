package member

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// ProbeFailures is how many probes in a row must fail before a member counts as unreachable: one
// slow answer of a busy apiserver is not an outage (it would requeue every service).
const ProbeFailures = 3

// probeTimeout bounds one probe: longer than the interval, since a loaded apiserver answers late.
const probeTimeout = 5 * time.Second

// probe watches the member's health until ctx ends, with a client of its own that no rate limit
// holds back behind the member's writes.
func (m *Cache) probe(ctx context.Context) {
	cfg := rest.CopyConfig(m.Config)
	cfg.QPS, cfg.RateLimiter = -1, nil
	d := m.Discovery
	if c, err := kubernetes.NewForConfig(cfg); err == nil {
		d = c.Discovery()
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if m.Probed(clusterset.Probe(ctx, d, max(probeTimeout, m.cfg.ProbeInterval))) && m.cfg.Handlers.Health != nil {
			m.cfg.Handlers.Health()
		}
	}, m.cfg.ProbeInterval)
}

// Probed records what a probe of the member found (nil: it answered); it says whether its
// reachability changed. A member turns unreachable after ProbeFailures failures in a row, and
// reachable at the first answer.
func (m *Cache) Probed(err error) (changed bool) {
	m.mu.Lock()
	was := m.reachable
	if err == nil {
		m.failures, m.reachable, m.err = 0, true, nil
	} else if m.failures++; m.failures >= ProbeFailures {
		m.reachable, m.err = false, err
	}
	if was && !m.reachable {
		m.unreachable = m.cfg.Now()
	}
	now := m.reachable
	m.mu.Unlock()
	m.gate.set(now)
	if was != now {
		klog.InfoS("member reachability changed", "cluster", m.ID(), "reachable", now)
		return true
	}
	return false
}
