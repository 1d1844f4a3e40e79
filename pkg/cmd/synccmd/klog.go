package synccmd

import (
	goflag "flag"

	"k8s.io/klog/v2"
)

// quietInfo keeps klog's info lines (a member retried, ...) off stderr unless -v asks for them;
// warnings and errors still print. One pass is a command whose report says what happened; a
// watch is a process whose log is read, and keeps them.
func quietInfo() {
	if klog.V(1).Enabled() {
		return
	}
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("legacy_stderr_threshold_behavior", "false")
	_ = fs.Set("stderrthreshold", "WARNING")
}
