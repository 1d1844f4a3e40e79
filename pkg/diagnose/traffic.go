package diagnose

import (
	"fmt"
	"strings"
)

// CheckTraffic is each member's traffic distribution choice of a service (docs/traffic.md).
const CheckTraffic = "traffic-distribution"

// checkTraffic: per member whose export makes a choice, whether it takes effect there, as status
// reads it (engine.ChoiceOf). Without effect is a warning: the service works, with every
// cluster's endpoints.
func checkTraffic(svcs []service) []Result {
	var out []Result
	for _, s := range svcs {
		for _, c := range s.item.Clusters {
			td := c.TrafficDistribution
			if td == nil {
				continue
			}
			r := Result{Check: CheckTraffic, Cluster: c.Cluster, Object: "serviceexport/" + s.Namespace + "/" + s.Name, Severity: OK,
				Message: fmt.Sprintf("%s takes effect: its own endpoints are hinted for zones %s", td.Value, strings.Join(td.Zones, ", "))}
			switch {
			case !td.Effective:
				r.Severity, r.Message = Warn, td.Message
				r.Fix = "give the member's nodes their topology.kubernetes.io/zone labels (at most 8 zones), or remove the choice: expose the service again without --traffic-distribution"
			case td.Message != "":
				r.Message += "; " + td.Message
			}
			out = append(out, r)
		}
	}
	return out
}
