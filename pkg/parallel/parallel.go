// Package parallel spreads independent CPU-bound steps over the machine's CPUs.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0) to f(n-1), on as many goroutines as there are CPUs, and returns when all have
// returned. The calls must not depend on one another.
func For(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
