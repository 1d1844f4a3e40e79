package main

import (
	"os/exec"
	"syscall"
)

// dieWithBench has the kernel kill cmd when the benchmark dies, however it dies: a sync --watch
// left running would keep writing into the next run's test bed.
func dieWithBench(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
