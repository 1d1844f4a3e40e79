// Package logcapture collects what klog logs during a test, for the tests that hold a command to
// saying nothing at the default verbosity.
package logcapture

import (
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// Start sends klog's output, at klog's own verbosity, to memory until the test ends, and returns
// what has been logged so far on each call.
func Start(t testing.TB) func() string {
	l := &lines{}
	klog.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(l))))
	t.Cleanup(klog.ClearLogger)
	return l.String
}

// lines is written by the goroutines that log.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
