package synccmd

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidateRateLimit(t *testing.T) {
	cases := []struct {
		qps   float32
		burst int
		err   string
	}{
		{50, 100, ""},
		{0.5, 1, ""},
		{0, 100, "--kube-api-qps 0: must be greater than 0"},
		{-1, 100, "--kube-api-qps -1: must be greater than 0"},
		{50, 0, "--kube-api-burst 0: must be greater than 0"},
	}
	for _, c := range cases {
		got := ""
		if err := validateRateLimit(c.qps, c.burst); err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("validateRateLimit(%v, %d) = %q, want %q", c.qps, c.burst, got, c.err)
		}
	}
}

func TestServePprof(t *testing.T) {
	mux := http.NewServeMux()
	servePprof(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap") {
		t.Errorf("/debug/pprof/: %d, %.200s", resp.StatusCode, body)
	}
}
