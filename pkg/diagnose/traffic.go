package diagnose

import (
	"fmt"
	"strings"
)

// CheckTraffic is each member's traffic distribution choice of a service (docs/traffic.md).
const CheckTraffic = "traffic-distribution"

// checkTraffic: whether the copies carry the service's trafficDistribution (engine.ZoneHints),
// and per member whose export makes a choice, whether it takes effect there (engine.ChoiceOf),
// as status reads them. Without effect is a warning: the service works, with every cluster's
// endpoints.
func checkTraffic(svcs []service) []Result {
	var out []Result
	for _, s := range svcs {
		if z := s.item.TrafficDistribution; z != nil {
			r := Result{Check: CheckTraffic, Object: objectName("service", s.key), Severity: OK,
				Message: fmt.Sprintf("trafficDistribution %s: the copies hint each endpoint with its own zone", z.Value)}
			switch {
			case !z.Effective:
				r.Severity, r.Message = Warn, z.Message
				r.Fix = "give the nodes of the clusters named their topology.kubernetes.io/zone labels (an endpoint gets its zone when the EndpointSlice controller next computes it, e.g. for a new pod), or remove the Service's trafficDistribution"
			case z.Message != "":
				r.Message += "; " + z.Message
			}
			out = append(out, r)
		}
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
