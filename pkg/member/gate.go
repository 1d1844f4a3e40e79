package member

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// gate holds the informers' requests while the probe finds the member unreachable. Without it,
// each reflector retries on its own with client-go's backoff (up to 30 s, doubled by jitter, and
// not shortened when the member returns), so a member back from an outage stayed unread for up
// to a minute, kind by kind. Held, a reflector's list leaves the moment a probe gets an answer.
type gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while requests pass
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

// set opens or closes the gate.
func (g *gate) set(open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		if !open {
			g.open = make(chan struct{})
		}
	default:
		if open {
			close(g.open)
		}
	}
}

// wait returns once the gate is open, or ctx's error.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// config is cfg with every request held at the gate.
func (g *gate) config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gated{g, rt} })
	return c
}

type gated struct {
	g    *gate
	next http.RoundTripper
}

func (t gated) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.wait(req.Context()); err != nil {
		return nil, err
	}
	return t.next.RoundTrip(req)
}
