package synccmd

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
)

// sync --watch says that its caches synced only at -v=2, as a member that joins does.
func TestWatchIsQuietByDefault(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	klog.SetLogger(funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{}))
	defer klog.ClearLogger()

	var out bytes.Buffer
	o := &Options{Workers: 1, MetricsAddr: "0", HealthAddr: "0", IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := o.watch(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) > 0 {
		t.Errorf("at the default verbosity, sync --watch logs:\n%s", strings.Join(logged, "\n"))
	}
}
