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
			out = append(out, effect(r, z.Effective, z.Message,
				"give the nodes of the clusters named their topology.kubernetes.io/zone labels (an endpoint gets its zone when the EndpointSlice controller next computes it, e.g. for a new pod), or remove the Service's trafficDistribution"))
		}
		for _, c := range s.item.Clusters {
			td := c.TrafficDistribution
			if td == nil {
				continue
			}
			r := Result{Check: CheckTraffic, Cluster: c.Cluster, Object: "serviceexport/" + s.Namespace + "/" + s.Name, Severity: OK,
				Message: fmt.Sprintf("%s takes effect: its own endpoints are hinted for zones %s", td.Value, strings.Join(td.Zones, ", "))}
			out = append(out, effect(r, td.Effective, td.Message,
				"give the member's nodes their topology.kubernetes.io/zone labels (at most 8 zones), or remove the choice: expose the service again without --traffic-distribution"))
		}
	}
	return out
}

// effect is r, the passed check of a choice, as the choice's state makes it: a warning saying why
// it has no effect (with fix), or r with what else status says of it.
func effect(r Result, effective bool, msg, fix string) Result {
	switch {
	case !effective:
		r.Severity, r.Message, r.Fix = Warn, msg, fix
	case msg != "":
		r.Message += "; " + msg
	}
	return r
}
