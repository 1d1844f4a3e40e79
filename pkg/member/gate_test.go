package member

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A request made while the gate is closed leaves when it opens, not before, and one made
// while it is open is not held.
func TestGateHoldsRequestsWhileClosed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	defer srv.Close()
	g := newGate()
	c, err := rest.HTTPClientFor(g.config(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	get := func() error {
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("open gate: %v", err)
	}
	g.set(false)
	g.set(false) // closing twice keeps one gate
	done := make(chan error, 1)
	go func() { done <- get() }()
	select {
	case err := <-done:
		t.Fatalf("a request passed a closed gate (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	g.set(true)
	g.set(true)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("held request: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a held request did not leave when the gate opened")
	}

	g.set(false)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := c.Do(req); err == nil {
		t.Fatal("a request whose context ended passed a closed gate")
	}
}
