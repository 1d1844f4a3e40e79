package export

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// validateChoice accepts PreferSameCluster or nothing, and only for a direct clusterset: the
// hints are sync's to write, and Karmada's controllers write none.
func (s *Spec) validateChoice() error {
	switch {
	case s.TrafficDistribution == "":
		return nil
	case s.TrafficDistribution != names.PreferSameCluster:
		return fmt.Errorf("--traffic-distribution %q: must be %s, or empty for no preference", s.TrafficDistribution, names.PreferSameCluster)
	case s.Karmada:
		return fmt.Errorf("--traffic-distribution is for a direct clusterset (kubectl mcs sync writes the hints): leave out --karmada")
	}
	return nil
}

// recordChoice annotates a ServiceExport with the choice. Without one the annotation is left out,
// so that the server-side apply removes one an earlier expose recorded.
func (s *Spec) recordChoice(se *unstructured.Unstructured) {
	if s.TrafficDistribution == "" {
		return
	}
	a := se.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[names.TrafficDistributionAnnotation] = s.TrafficDistribution
	se.SetAnnotations(a)
}
