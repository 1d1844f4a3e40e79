// Command pause is the sandbox process of the real-node test bed's pods: containerd cannot pull the
// stock pause image here, so the test bed builds this one. It holds the pod's namespaces until
// SIGTERM or SIGINT and, as PID 1 of the sandbox, reaps any child re-parented to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
