package synccmd

import (
	"fmt"
)

// validateRateLimit checks --kube-api-qps and --kube-api-burst: client-go treats a QPS of 0 as
// "use its own default" and a negative one as "no limit", neither of which the user meant.
func validateRateLimit(qps float32, burst int) error {
	if qps <= 0 {
		return fmt.Errorf("--kube-api-qps %v: must be greater than 0", qps)
	}
	if burst <= 0 {
		return fmt.Errorf("--kube-api-burst %d: must be greater than 0", burst)
	}
	return nil
}
