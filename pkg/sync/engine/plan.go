package engine

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// ownedConditionTypes are the ServiceExport conditions the engine writes; others are left alone.
var ownedConditionTypes = map[string]bool{
	string(mcsv1beta1.ServiceExportConditionValid):    true,
	string(mcsv1beta1.ServiceExportConditionReady):    true,
	string(mcsv1beta1.ServiceExportConditionConflict): true,
}

// OwnsCondition reports whether a ServiceExport condition type is one the engine writes (and the
// writer may send); the others belong to someone else.
func OwnsCondition(t string) bool { return ownedConditionTypes[t] }

// Plan returns the writes that take the reachable clusters of obs to want. Objects without the
// managed-by label are never touched, nor are objects of services outside obs.Services or held
// for an unread source cluster (want's Held): a member that was not read is not "not exporting".
//
// Order matters to the writer: actions are sorted by cluster, kind (ServiceImport, Service,
// EndpointSlice, ServiceExport), namespace, name, then verb (delete, create, update,
// status). A ServiceImport create is followed by a status action because status is a
// subresource; a delete followed by a create of the same object replaces an immutable field.
func Plan(obs Observed, want Desired) []Action {
	fm := obs.FieldManager
	if fm == "" {
		fm = names.FieldManager
	}
	// No desired state for a cluster means we know nothing to do there, not "delete all"; its
	// objects are not even indexed (Observed.For wants one cluster of many).
	planned := obs
	planned.Clusters = slices.DeleteFunc(slices.Clone(obs.Clusters), func(c ObservedCluster) bool { return !c.Reachable || want.Clusters[c.ID] == nil })
	var out []Action
	for _, ci := range indexClusters(planned) {
		out = append(out, planCluster(obs, ci, want.Clusters[ci.ID], fm)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return actionLess(out[i], out[j]) })
	return out
}

var kindOrder = map[string]int{snapshot.KindServiceImport: 0, snapshot.KindService: 1, snapshot.KindEndpointSlice: 2, snapshot.KindServiceExport: 3}

var verbOrder = map[string]int{VerbDelete: 0, VerbCreate: 1, VerbUpdate: 2, VerbStatus: 3}

func actionLess(a, b Action) bool {
	if ObjectLess(a, b) || ObjectLess(b, a) {
		return ObjectLess(a, b)
	}
	return verbOrder[a.Verb] < verbOrder[b.Verb]
}

// ObjectLess orders the objects that actions write as a plan does: by cluster, kind (in the order
// they are written), namespace and name.
func ObjectLess(a, b Action) bool {
	if a.Cluster != b.Cluster {
		return a.Cluster < b.Cluster
	}
	if a.Kind != b.Kind {
		return kindOrder[a.Kind] < kindOrder[b.Kind]
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// clusterPlan is the plan of one reachable cluster: the writes that take what ci holds to cd.
type clusterPlan struct {
	obs Observed
	ci  *clusterIndex
	cd  *ClusterDesired
	fm  string // our field manager: only its managed fields are compared
	out []Action
}

func planCluster(obs Observed, ci *clusterIndex, cd *ClusterDesired, fm string) []Action {
	p := &clusterPlan{obs: obs, ci: ci, cd: cd, fm: fm}
	wantImp, wantSvc, wantSlice := p.imports(), p.services(), p.slices()
	p.exportStatuses()
	p.stale(wantImp, wantSvc, wantSlice)
	return p.out
}

func (p *clusterPlan) add(kind, verb string, m metav1.ObjectMeta, obj runtime.Object) {
	a := Action{Cluster: p.ci.ID, Kind: kind, Namespace: m.Namespace, Name: m.Name, Verb: verb}
	if obj != nil {
		a.Object = obj.DeepCopyObject()
	}
	p.out = append(p.out, a)
}

// imports plans the desired ServiceImports, spec and status apart; it returns their keys.
func (p *clusterPlan) imports() map[key]bool {
	want := map[key]bool{}
	for _, d := range p.cd.ServiceImports {
		k := key{Namespace: d.Namespace, Name: d.Name}
		want[k] = true
		o := p.ci.ix.Imports[k]
		switch {
		case o == nil:
			p.add(snapshot.KindServiceImport, VerbCreate, d.ObjectMeta, d)
			if len(d.Status.Clusters)+len(d.Status.Conditions) > 0 {
				p.add(snapshot.KindServiceImport, VerbStatus, d.ObjectMeta, d)
			}
		case !names.IsManaged(o.Labels):
		default:
			if !metaMatches(snapshot.KindServiceImport, o.ObjectMeta, d.ObjectMeta, p.fm) ||
				!importSpecEqual(o.Spec, d.Spec, owned{o.ManagedFields, p.fm}) {
				p.add(snapshot.KindServiceImport, VerbUpdate, d.ObjectMeta, d)
			}
			if !clustersEqual(o.Status.Clusters, d.Status.Clusters) || !importReadyEqual(o.Status.Conditions, d.Status.Conditions) {
				p.add(snapshot.KindServiceImport, VerbStatus, d.ObjectMeta, d)
			}
		}
	}
	return want
}

// services plans the desired derived Services; it returns their keys.
func (p *clusterPlan) services() map[key]bool {
	want := map[key]bool{}
	for _, d := range p.cd.Services {
		k := key{Namespace: d.Namespace, Name: d.Name}
		want[k] = true
		o := p.ci.ix.Services[k]
		switch {
		case o == nil:
			p.add(snapshot.KindService, VerbCreate, d.ObjectMeta, d)
		case !names.IsManaged(o.Labels):
		case (o.Spec.ClusterIP == corev1.ClusterIPNone) != (d.Spec.ClusterIP == corev1.ClusterIPNone) ||
			(len(d.Spec.IPFamilies) > 0 && len(o.Spec.IPFamilies) > 0 && o.Spec.IPFamilies[0] != d.Spec.IPFamilies[0]):
			// clusterIP and the primary IP family are immutable: a change needs a new Service.
			p.add(snapshot.KindService, VerbDelete, d.ObjectMeta, nil)
			p.add(snapshot.KindService, VerbCreate, d.ObjectMeta, d)
		case !metaMatches(snapshot.KindService, o.ObjectMeta, d.ObjectMeta, p.fm) || !serviceSpecEqual(o.Spec, d.Spec, owned{o.ManagedFields, p.fm}):
			p.add(snapshot.KindService, VerbUpdate, d.ObjectMeta, d)
		}
	}
	return want
}

// slices plans the desired EndpointSlice copies; it returns their keys.
func (p *clusterPlan) slices() map[key]bool {
	want := map[key]bool{}
	for _, d := range p.cd.EndpointSlices {
		k := key{Namespace: d.Namespace, Name: d.Name}
		want[k] = true
		o := p.ci.ix.Slices[k]
		switch {
		case o == nil:
			p.add(snapshot.KindEndpointSlice, VerbCreate, d.ObjectMeta, d)
		case !names.IsManaged(o.Labels):
		case o.AddressType != d.AddressType: // immutable
			p.add(snapshot.KindEndpointSlice, VerbDelete, d.ObjectMeta, nil)
			p.add(snapshot.KindEndpointSlice, VerbCreate, d.ObjectMeta, d)
		case !metaMatches(snapshot.KindEndpointSlice, o.ObjectMeta, d.ObjectMeta, p.fm) || snapshot.SliceDigest(o) != snapshot.SliceDigest(d):
			p.add(snapshot.KindEndpointSlice, VerbUpdate, d.ObjectMeta, d)
		}
	}
	return want
}

// exportStatuses plans the export status writes whose owned conditions change.
func (p *clusterPlan) exportStatuses() {
	for k, conds := range p.cd.ExportConditions {
		o := p.ci.exports[k]
		if o == nil {
			continue
		}
		if merged, changed := mergeConditions(o.Status.Conditions, conds); changed {
			e := o.DeepCopy()
			e.Status.Conditions = merged
			p.add(snapshot.KindServiceExport, VerbStatus, e.ObjectMeta, e)
		}
	}
}

// stale deletes what sync wrote and no longer wants. Besides the managed-by label each kind must
// carry the mark sync gives it, so that objects other kubectl-mcs commands created are never
// collected here, and the mark must name a service this observation decides. Held objects stay.
func (p *clusterPlan) stale(wantImp, wantSvc, wantSlice map[key]bool) {
	held := map[string]bool{}
	for _, h := range p.cd.Held {
		held[h.Kind+"/"+h.Namespace+"/"+h.Name] = true
	}
	collect := func(kind string, o metav1.ObjectMeta, service string, wanted map[key]bool) {
		if service != "" && names.IsManaged(o.Labels) && !wanted[key{Namespace: o.Namespace, Name: o.Name}] &&
			!held[kind+"/"+o.Namespace+"/"+o.Name] && inScope(p.obs, key{Namespace: o.Namespace, Name: service}) {
			p.add(kind, VerbDelete, o, nil)
		}
	}
	for _, o := range p.ci.ServiceImports {
		svc := ""
		if o.Annotations[names.DerivedServiceAnnotation] != "" {
			svc = o.Name
		}
		collect(snapshot.KindServiceImport, o.ObjectMeta, svc, wantImp)
	}
	for _, o := range p.ci.Services {
		collect(snapshot.KindService, o.ObjectMeta, o.Labels[mcsv1beta1.LabelServiceName], wantSvc)
	}
	for _, o := range p.ci.EndpointSlices {
		if o.Labels[mcsv1beta1.LabelSourceCluster] != "" {
			collect(snapshot.KindEndpointSlice, o.ObjectMeta, o.Labels[mcsv1beta1.LabelServiceName], wantSlice)
		}
	}
}

// changed is false when every owned condition already says the same thing.
func mergeConditions(have, want []metav1.Condition) ([]metav1.Condition, bool) {
	var out []metav1.Condition
	owned := 0
	for _, c := range have {
		if !ownedConditionTypes[c.Type] {
			out = append(out, c)
			continue
		}
		owned++
	}
	changed := owned != len(want)
	for _, w := range want {
		found := false
		for _, c := range have {
			if c.Type == w.Type {
				found = c.Status == w.Status && c.Reason == w.Reason && c.Message == w.Message &&
					c.ObservedGeneration == w.ObservedGeneration
				break
			}
		}
		changed = changed || !found
	}
	return append(out, want...), changed
}
