package synccmd

import (
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
