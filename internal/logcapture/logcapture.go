// Package logcapture keeps what klog logs in a test binary, for the tests that hold a command to
// saying nothing at the default verbosity. klog's logger may only be set before any goroutine
// logs (SetLogger is not safe for concurrent use, and informers a test started may still log after
// it ends), so Install is called once, from TestMain, and never undone.
package logcapture

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

var all lines

// Install sends klog's output, at klog's own verbosity, to stderr as before and to memory. Call
// it from TestMain, before m.Run.
func Install() {
	klog.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.MultiWriter(os.Stderr, &all)))))
}

// Main is a TestMain that installs the capture, then runs the tests.
func Main(m *testing.M) {
	Install()
	os.Exit(m.Run())
}

// Since returns a function that says what has been logged since this call.
func Since() func() string {
	start := len(all.String())
	return func() string { return all.String()[start:] }
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
