package uninstall

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/about"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// propertiesCRD is the About API's CRD, as init --clusterset installs it.
const propertiesCRD = "clusterproperties.about.k8s.io"

// deleteProperties deletes what init --clusterset wrote: its two ClusterProperties (our label),
// then their CRD when init installed it and no ClusterProperty of anyone else is left, since
// those would go with it. It runs with --crds only: while the clusterset stays, other MCS
// controllers read the cluster ID from the property.
func (o *Options) deleteProperties(ctx context.Context, s *site) error {
	for _, name := range []string{about.ClusterIDProperty, about.ClustersetProperty} {
		if err := o.deleteNamed(ctx, s, about.Resource, "", name); err != nil {
			return err
		}
	}
	left, err := list(ctx, s.conn, about.Resource, "")
	if apierrors.IsNotFound(err) {
		return nil // no CRD: nothing more to do
	}
	if err != nil {
		return err
	}
	for _, p := range left {
		if !names.IsManaged(p.GetLabels()) {
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q: clusterproperty.about.k8s.io %s was not created by kubectl-mcs; it and the CRD %s are left alone\n",
				s.conn.ID, p.GetName(), propertiesCRD)
			return nil
		}
	}
	crd, err := s.conn.Dynamic.Resource(mcsapi.CRDResource).Get(ctx, propertiesCRD, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", ref(s.conn.ID, mcsapi.CRDResource, "", propertiesCRD), err)
	case !names.IsManaged(crd.GetLabels()):
		return nil // another controller's: its properties are its own
	}
	if err := o.deleteObject(ctx, s, mcsapi.CRDResource, crd); err != nil {
		return err
	}
	return o.waitGone(ctx, s, mcsapi.CRDResource, "", propertiesCRD)
}
