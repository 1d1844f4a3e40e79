package main

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// ownCPU is the user and system CPU seconds this process has had.
func ownCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// The bench's own CPU shows under its name; the window's length and idle share are the machine's.
func TestCPUUseAttributesThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this machine: CPU accounting reports nothing here")
	}
	// Spin until this process has had 0.3 CPU seconds, however busy the machine (a spin of fixed
	// wall time gets less than that when other work shares the cores).
	before := sampleCPU(nil)
	start := ownCPU()
	for end := time.Now().Add(30 * time.Second); ownCPU()-start < 0.3 && time.Now().Before(end); {
	}
	u := sampleCPU(nil).since(before)
	if u == nil {
		t.Fatal("no use reported")
	}
	if got := u.ByProgram["bench"]; got < 0.25 || got > u.WallS*float64(runtime.NumCPU())+0.05 {
		t.Errorf("bench used %.2f CPU s in %.2f s, while it spun for 0.3 CPU s (all: %v)", got, u.WallS, u)
	}
	if u.WallS < 0.3 || u.IdlePct < 0 || u.IdlePct > 100 {
		t.Errorf("window %.2f s, idle %.0f%%", u.WallS, u.IdlePct)
	}
}

// A program under 1% of the window goes to "other", but never a sync measured: its CPU per change
// is read from its own entry.
func TestCPUUseKeepsTheSyncs(t *testing.T) {
	now := time.Now()
	before := cpuSample{at: now, byProgram: map[string]float64{"kube-apiserver": 0, "sync": 0, otherSyncs: 0, "tiny": 0}, total: 0}
	after := cpuSample{at: now.Add(time.Second), byProgram: map[string]float64{"kube-apiserver": 100, "sync": 0.5, otherSyncs: 0.5, "tiny": 0.5}, total: 200}
	u := after.since(before)
	if u.ByProgram["sync"] != 0.5 || u.ByProgram[otherSyncs] != 0.5 || u.ByProgram["tiny"] != 0 || u.ByProgram["other"] != 0.5 {
		t.Errorf("by program %v: want sync and the other syncs kept, tiny in other", u.ByProgram)
	}
}
