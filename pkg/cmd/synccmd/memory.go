package synccmd

import (
	"runtime/debug"
	"strconv"

	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// heapLimit is the soft memory limit for the Go runtime: 90% of the container's limit that
// install.MemoryLimitEnv carries (the generated Deployment sets it from limits.memory), leaving
// the rest to what is not heap (stacks, the runtime, the binary). 0 when GOMEMLIMIT is set (the
// runtime has read it) or no limit is known. GOGC stays at its default: below the limit the heap
// may grow to twice what is live, which the generated limit allows for (install.Footprint), and
// near the limit the runtime collects more often instead.
func heapLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, err := strconv.ParseInt(getenv(install.MemoryLimitEnv), 10, 64)
	if err != nil || limit <= 0 {
		return 0
	}
	return limit / 10 * 9
}

// limitHeap applies heapLimit.
func limitHeap(getenv func(string) string) {
	if l := heapLimit(getenv); l > 0 {
		debug.SetMemoryLimit(l)
		klog.V(2).InfoS("heap limited", "bytes", l, "from", install.MemoryLimitEnv)
	}
}
