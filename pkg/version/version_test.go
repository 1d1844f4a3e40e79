package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	info := func(v string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Version: v}}, true }
	}
	for _, c := range []struct {
		stamped, module, want string
	}{
		{"v1.2.3", "v9.9.9", "v1.2.3"},          // make build / make dist stamp wins
		{"v0.0.0-dev", "v0.4.1", "v0.4.1"},      // go install ...@v0.4.1
		{"v0.0.0-dev", "(devel)", "v0.0.0-dev"}, // go build without VCS information
		{"v0.0.0-dev", "", "v0.0.0-dev"},
	} {
		if got := fromBuildInfo(c.stamped, info(c.module)); got != c.want {
			t.Errorf("stamped %q, module %q: got %q, want %q", c.stamped, c.module, got, c.want)
		}
	}
	if got := fromBuildInfo("v0.0.0-dev", func() (*debug.BuildInfo, bool) { return nil, false }); got != "v0.0.0-dev" {
		t.Errorf("no build info: got %q", got)
	}
}
