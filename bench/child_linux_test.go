package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A child started with dieWithBench goes when the benchmark is killed (SIGKILL, no defer runs).
func TestChildDiesWithBench(t *testing.T) {
	if os.Getenv("BENCH_CHILD_PARENT") == "1" {
		child := exec.Command("sleep", "60")
		dieWithBench(child)
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		time.Sleep(time.Minute) // killed by the test before this ends
		os.Exit(0)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithBench$")
	parent.Env = append(os.Environ(), "BENCH_CHILD_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		// Gone from the process table once its reaper (init, or a subreaper) waits for it.
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && len(st) > 0 && zombie(string(st)) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still running 5 s after the benchmark was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reads the state field of /proc/PID/stat (after the command in parentheses).
func zombie(stat string) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}
