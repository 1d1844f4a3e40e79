package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// The bench's own CPU shows under its name; the window's length and idle share are the machine's.
func TestCPUUseAttributesThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this machine: CPU accounting reports nothing here")
	}
	before := sampleCPU(-1)
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	u := sampleCPU(-1).since(before)
	if u == nil {
		t.Fatal("no use reported")
	}
	if got := u.ByProgram["bench"]; got < 0.1 || got > u.WallS*float64(runtime.NumCPU())+0.05 {
		t.Errorf("bench used %.2f CPU s in %.2f s of spinning, want at least 0.1 (all: %v)", got, u.WallS, u)
	}
	if u.WallS < 0.3 || u.IdlePct < 0 || u.IdlePct > 100 {
		t.Errorf("window %.2f s, idle %.0f%%", u.WallS, u.IdlePct)
	}
}
