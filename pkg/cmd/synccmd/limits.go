package synccmd

import (
	"fmt"
	"net/http"
	"net/http/pprof"
)

// validateRateLimit checks --kube-api-qps and --kube-api-burst: client-go treats a QPS of 0 as
// "use its own default" and a negative one as "no limit", neither of which the user meant.
func validateRateLimit(qps float32, burst int) error {
	if qps <= 0 {
		return fmt.Errorf("--kube-api-qps %v: must be greater than 0", qps)
	}
	if burst <= 0 {
		return fmt.Errorf("--kube-api-burst %d: must be greater than 0", burst)
	}
	return nil
}

// servePprof adds Go's profiles (CPU, heap, goroutines, ...) to the metrics server, for
// --profiling. (Importing net/http/pprof also registers them on http.DefaultServeMux, which
// nothing here serves.)
func servePprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
