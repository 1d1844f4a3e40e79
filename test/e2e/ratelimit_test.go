//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSyncRateLimitAndProfiling: --kube-api-qps/--kube-api-burst are refused unless positive and
// bound a one-shot sync from below; --profiling serves pprof on the metrics address, and only
// with it.
func TestSyncRateLimitAndProfiling(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--kube-api-qps 0", "--kube-api-qps 0: must be greater than 0"},
		{"--kube-api-burst -1", "--kube-api-burst -1: must be greater than 0"},
		{"--watch --profiling", "--profiling serves on --metrics-bind-address: set it too"},
	} {
		r := mcs(append([]string{"sync", "--contexts", allMembers}, strings.Fields(c.args)...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("sync %s: exit %d, stderr %q; want a refusal %q", c.args, r.code, r.stderr, c.want)
		}
	}

	ns := namespace(t, "e2e-qps", members...)
	for _, name := range []string{"a", "b", "c"} {
		service(t, "member1", ns, name)
		userExport(t, "member1", ns, name)
	}
	// Three services need at least three writes each (import, derived Service, slice) in every
	// cluster, besides the lists and reads; at 2 requests a second with a burst of 1 that cannot
	// take under 3 s however fast the machine, whereas at the default limit it takes well under
	// a second on an idle machine. A lower bound: a busy machine only makes it longer.
	t0 := time.Now()
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers, "--kube-api-qps", "2", "--kube-api-burst", "1")
	took := time.Since(t0)
	t.Logf("one-shot sync of 3 services at --kube-api-qps 2 --kube-api-burst 1: %v", took)
	if took < 3*time.Second {
		t.Errorf("sync at --kube-api-qps 2 --kube-api-burst 1 took %v: the limit is not applied", took)
	}
	for _, c := range members {
		for _, name := range []string{"a", "b", "c"} {
			if get(t, c, siGVR("v1beta1"), ns, name) == nil {
				t.Errorf("%s: no ServiceImport %s/%s after the rate-limited sync", c, ns, name)
			}
		}
	}

	pprofStatus := func(w *watcher) (int, string) {
		resp, err := http.Get("http://" + w.metrics + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	w := startWatch(t, ns, "--kube-api-qps", "500", "--kube-api-burst", "1000", "--profiling")
	waitFor(t, "/readyz", func() bool { return w.probe("/readyz") == http.StatusOK })
	if code, body := pprofStatus(w); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("--profiling: /debug/pprof/heap: %d, %.100q", code, body)
	}
	w.kill()
	plain := startWatch(t, ns)
	waitFor(t, "/readyz", func() bool { return plain.probe("/readyz") == http.StatusOK })
	if code, _ := pprofStatus(plain); code != http.StatusNotFound {
		t.Errorf("without --profiling: /debug/pprof/heap: %d, want 404", code)
	}
}
