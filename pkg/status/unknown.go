package status

import (
	"fmt"
	"slices"
	"strings"
)

// UnknownWarning is one line for a table of services some of which are Unknown because this read
// (--contexts) leaves out the clusters their imports name as sources: which services, which
// clusters, and why the table cannot tell more. "" when there are none. A table row only says
// Unknown; the description of the service says the same at length.
func UnknownWarning(l *MultiClusterServiceStatusList) string {
	var services, clusters []string
	for _, it := range l.Items {
		if it.Health != Unknown || len(it.UnreadExporters) == 0 {
			continue
		}
		services = append(services, it.Namespace+"/"+it.Name)
		for _, id := range it.UnreadExporters {
			if !slices.Contains(clusters, id) {
				clusters = append(clusters, id)
			}
		}
	}
	if len(services) == 0 {
		return ""
	}
	slices.Sort(clusters)
	named := services
	if len(named) > 3 {
		named = append(named[:3:3], "...")
	}
	which := fmt.Sprintf("service %s is Unknown: its imports name", named[0])
	if len(services) > 1 {
		which = fmt.Sprintf("%d services are Unknown (%s): their imports name", len(services), strings.Join(named, ", "))
	}
	return fmt.Sprintf("%s %s as %s, outside --contexts, whose exports this read cannot know",
		which, quoteJoin(clusters), plural(len(clusters), "a source", "sources"))
}
