package reconciler

// Observation: what the read members hold of one service, for the engine.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// observe gathers what every read member knows of one service. Members not read yet are left
// out (the engine keeps what the clusterset recorded about them); so is, for this service only, a
// member whose ServiceExport does not decode, which is reported in problems.
func (r *Reconciler) observe(ns, name string) (obs engine.Observed, problems []string) {
	obs = engine.Observed{Now: metav1.NewTime(r.now()), FieldManager: r.opts.FieldManager,
		Services: []types.NamespacedName{{Namespace: ns, Name: name}}}
	derived := names.DerivedServiceName(name)
	ours := labels.SelectorFromSet(labels.Set{mcsv1beta1.LabelServiceName: name})
	for _, m := range r.members {
		obs.Members = append(obs.Members, m.ID)
		synced, reachable, since := m.state()
		if !synced {
			continue
		}
		if !reachable && r.opts.UnreachableTimeout > 0 && r.now().Sub(since) > r.opts.UnreachableTimeout {
			obs.Evicted = append(obs.Evicted, m.ID) // its endpoints leave the other clusters
			continue
		}
		cs := engine.ClusterState{ID: m.ID, Reachable: reachable, ImportSchema: m.importSchema, ExportSchema: m.exportSchema}
		// A terminating namespace imports nothing: creates there would fail until it is gone.
		if n, err := m.namespaces.Get(ns); err == nil && n.DeletionTimestamp == nil && n.Status.Phase != corev1.NamespaceTerminating {
			cs.Namespaces = []string{ns}
		}
		named := func(o metav1.Object) bool { return o.GetName() == name }
		se, err := cached[mcsv1beta1.ServiceExport](m.exports, ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceExport %s/%s: %v; what this cluster recorded for it stands", m.ID, ns, name, err))
			continue
		}
		cs.ServiceExports = overlay(&m.recent, engine.KindServiceExportStatus, ns, se, func(o *mcsv1beta1.ServiceExport) bool { return named(o) })
		si, err := cached[mcsv1beta1.ServiceImport](m.imports, ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceImport %s/%s: %v; not importing there", m.ID, ns, name, err))
			continue
		}
		cs.ServiceImports = overlay(&m.recent, engine.KindServiceImport, ns, si, func(o *mcsv1beta1.ServiceImport) bool { return named(o) })
		for _, n := range []string{name, derived} {
			if s, err := m.services.Services(ns).Get(n); err == nil {
				cs.Services = append(cs.Services, s)
			}
		}
		cs.Services = overlay(&m.recent, engine.KindService, ns, cs.Services, func(o *corev1.Service) bool { return o.Name == derived })
		seen := map[string]bool{}
		for _, k := range []string{ns + "/src/" + name, ns + "/src/" + derived, ns + "/mcs/" + name} {
			l, _ := m.slices.ByIndex(sliceIndex, k)
			for _, o := range l {
				if s := o.(*discoveryv1.EndpointSlice); !seen[s.Name] {
					seen[s.Name] = true
					cs.EndpointSlices = append(cs.EndpointSlices, s)
				}
			}
		}
		cs.EndpointSlices = overlay(&m.recent, engine.KindEndpointSlice, ns, cs.EndpointSlices, func(o *discoveryv1.EndpointSlice) bool {
			return ours.Matches(labels.Set(o.Labels))
		})
		obs.Clusters = append(obs.Clusters, cs)
	}
	return obs, problems
}

// cached is the object ns/name of a dynamic informer's store as a *T: none or one.
func cached[T any](store cache.Store, ns, name string) ([]*T, error) {
	t, err := decode.Cached[T](store, ns+"/"+name)
	if t == nil {
		return nil, err
	}
	return []*T{t}, nil
}
