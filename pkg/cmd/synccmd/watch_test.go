package synccmd

import (
	"bytes"
	"context"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/internal/logcapture"
)

// TestMain installs the klog capture before any test starts a goroutine that logs.
func TestMain(m *testing.M) { logcapture.Main(m) }

// sync --watch says that its caches synced only at -v=2, as a member that joins does.
func TestWatchIsQuietByDefault(t *testing.T) {
	logged := logcapture.Since()

	var out bytes.Buffer
	o := &Options{Workers: 1, MetricsAddr: "0", HealthAddr: "0", IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := o.watch(ctx); err != nil {
		t.Fatal(err)
	}
	if got := logged(); got != "" {
		t.Errorf("at the default verbosity, sync --watch logs:\n%s", got)
	}
}
