package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"
)

// Serve serves h on addr until ctx ends ("" or "0": nothing served). A port that cannot be
// listened on is an error at once.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	if addr == "" || addr == "0" {
		return nil
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("listening on %s: %w", addr, err)
	case <-time.After(100 * time.Millisecond):
		return nil
	}
}

// Pprof adds Go's profiles (CPU, heap, goroutines, ...) to the metrics server, for
// --profiling. (Importing net/http/pprof also registers them on http.DefaultServeMux, which
// nothing here serves.)
func Pprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
