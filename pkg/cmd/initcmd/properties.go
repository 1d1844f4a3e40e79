package initcmd

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/about"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
)

// validateClusterset checks --clusterset: the value of clusterset.k8s.io, a DNS subdomain.
func (o *Options) validateClusterset() error {
	if o.ClustersetName == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(o.ClustersetName); len(errs) > 0 {
		return fmt.Errorf("--clusterset %q: %s", o.ClustersetName, errs[0])
	}
	return nil
}

// propertyItems are the two ClusterProperties of every member: its ID (as --contexts or its own
// property gave it) and the clusterset's name.
func (o *Options) propertyItems() []apply.Item {
	var items []apply.Item
	for _, m := range o.members {
		for _, p := range [][2]string{{about.ClusterIDProperty, m.ID}, {about.ClustersetProperty, o.ClustersetName}} {
			items = append(items, apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: about.Resource, Object: about.Property(p[0], p[1])})
		}
	}
	return items
}
