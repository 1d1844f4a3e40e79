package reconciler

// Observation: what the read members hold of one service, for the engine.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// observe gathers what every read member knows of one service. Members not read yet are left
// out (the engine keeps what the clusterset recorded about them); so is, for this service only, a
// member whose ServiceExport does not decode, which is reported in problems.
func (r *Reconciler) observe(ns, name string) (obs engine.Observed, problems []string) {
	if m := r.opts.Metrics; m != nil {
		m.Decisions.Inc()
	}
	obs = engine.Observed{Now: metav1.NewTime(r.now()), FieldManager: r.opts.FieldManager,
		Services: []types.NamespacedName{{Namespace: ns, Name: name}}}
	derived := names.DerivedServiceName(name)
	ours := labels.SelectorFromSet(labels.Set{mcsv1beta1.LabelServiceName: name})
	for _, m := range r.clusters {
		st := m.State()
		id := m.ID() // read after State: a member takes its ID before it joins
		obs.Members = append(obs.Members, id)
		if r.opts.Local != "" && r.writesIn(m) {
			obs.For = id // set even while it is not read: then nothing is decided for anyone
		}
		if !st.Joined {
			continue
		}
		if !st.Reachable && r.opts.UnreachableTimeout > 0 && r.now().Sub(st.Since) > r.opts.UnreachableTimeout {
			obs.Evicted = append(obs.Evicted, id) // its endpoints leave the other clusters
			continue
		}
		cs := engine.ObservedCluster{ID: id, UID: m.SystemUID(), Reachable: st.Reachable, ImportSchema: m.importSchema, ExportSchema: m.exportSchema}
		cs.Topology = m.Topology()
		// A terminating namespace imports nothing: creates there would fail until it is gone.
		if n, err := m.Namespace(ns); err == nil && n.DeletionTimestamp == nil && n.Status.Phase != corev1.NamespaceTerminating {
			cs.Namespaces = []string{ns}
		}
		se, err := m.Export(ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceExport %s/%s: %v; what this cluster recorded for it stands", id, ns, name, err))
			continue
		}
		cs.ServiceExports = overlay(&m.recent, snapshot.KindServiceExport, ns, one(se), func(o *mcsv1beta1.ServiceExport) bool { return o.Name == name })
		si, err := m.Import(ns, name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cluster %q: ServiceImport %s/%s: %v; not importing there", id, ns, name, err))
			continue
		}
		cs.ServiceImports = overlay(&m.recent, snapshot.KindServiceImport, ns, one(si), func(o *mcsv1beta1.ServiceImport) bool { return o.Name == name })
		for _, n := range []string{name, derived} {
			if s, err := m.Service(ns, n); err == nil {
				cs.Services = append(cs.Services, s)
			}
		}
		cs.Services = overlay(&m.recent, snapshot.KindService, ns, cs.Services, func(o *corev1.Service) bool { return o.Name == derived })
		cs.EndpointSlices = overlay(&m.recent, snapshot.KindEndpointSlice, ns, m.SlicesOf(ns, name), func(o *discoveryv1.EndpointSlice) bool {
			return ours.Matches(labels.Set(o.Labels))
		})
		obs.Clusters = append(obs.Clusters, cs)
	}
	obs.Evicted = append(obs.Evicted, r.moved(obs)...)
	if ids := engine.Unimportable(obs, types.NamespacedName{Namespace: ns, Name: name}); len(ids) > 0 {
		problems = append(problems, fmt.Sprintf("service %s/%s: %s", ns, name, engine.NoNamespaceMessage(ns, ids)))
	}
	return obs, problems
}

// one is none or one object.
func one[T any](o *T) []*T {
	if o == nil {
		return nil
	}
	return []*T{o}
}

// gone says whether no member read holds anything of the service: its export, import, Service,
// derived Service or slices.
func gone(obs engine.Observed) bool {
	for _, c := range obs.Clusters {
		if len(c.ServiceExports)+len(c.ServiceImports)+len(c.Services)+len(c.EndpointSlices) > 0 {
			return false
		}
	}
	return true
}
