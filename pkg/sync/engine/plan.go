package engine

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
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
// EndpointSlice, ServiceExportStatus), namespace, name, then verb (delete, create, update,
// status). A ServiceImport create is followed by a status action because status is a
// subresource; a delete followed by a create of the same object replaces an immutable field.
func Plan(obs Observed, want Desired) []Action {
	fm := obs.FieldManager
	if fm == "" {
		fm = names.FieldManager
	}
	var out []Action
	for _, ci := range indexClusters(obs) {
		cd := want.Clusters[ci.ID]
		if !ci.Reachable || cd == nil {
			continue // no desired state for it means we know nothing to do there, not "delete all"
		}
		out = append(out, planCluster(obs, ci, cd, fm)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return actionLess(out[i], out[j]) })
	return out
}

var kindOrder = map[string]int{KindServiceImport: 0, KindService: 1, KindEndpointSlice: 2, KindServiceExportStatus: 3}

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

func planCluster(obs Observed, ci *clusterIndex, cd *ClusterDesired, fm string) []Action {
	var out []Action
	add := func(kind, verb string, m metav1.ObjectMeta, obj runtime.Object) {
		a := Action{Cluster: ci.ID, Kind: kind, Namespace: m.Namespace, Name: m.Name, Verb: verb}
		if obj != nil {
			a.Object = obj.DeepCopyObject()
		}
		out = append(out, a)
	}

	wantImp := map[key]bool{}
	for _, d := range cd.ServiceImports {
		k := key{Namespace: d.Namespace, Name: d.Name}
		wantImp[k] = true
		o := ci.ix.Imports[k]
		switch {
		case o == nil:
			add(KindServiceImport, VerbCreate, d.ObjectMeta, d)
			if len(d.Status.Clusters) > 0 {
				add(KindServiceImport, VerbStatus, d.ObjectMeta, d)
			}
		case !names.IsManaged(o.Labels):
		default:
			if !metaMatches(o.ObjectMeta, d.ObjectMeta, fm) || !importSpecEqual(o.Spec, d.Spec) {
				add(KindServiceImport, VerbUpdate, d.ObjectMeta, d)
			}
			if !clustersEqual(o.Status.Clusters, d.Status.Clusters) {
				add(KindServiceImport, VerbStatus, d.ObjectMeta, d)
			}
		}
	}

	wantSvc := map[key]bool{}
	for _, d := range cd.Services {
		k := key{Namespace: d.Namespace, Name: d.Name}
		wantSvc[k] = true
		o := ci.ix.Services[k]
		switch {
		case o == nil:
			add(KindService, VerbCreate, d.ObjectMeta, d)
		case !names.IsManaged(o.Labels):
		case (o.Spec.ClusterIP == corev1.ClusterIPNone) != (d.Spec.ClusterIP == corev1.ClusterIPNone) ||
			(len(d.Spec.IPFamilies) > 0 && len(o.Spec.IPFamilies) > 0 && o.Spec.IPFamilies[0] != d.Spec.IPFamilies[0]):
			// clusterIP and the primary IP family are immutable: a change needs a new Service.
			add(KindService, VerbDelete, d.ObjectMeta, nil)
			add(KindService, VerbCreate, d.ObjectMeta, d)
		case !metaMatches(o.ObjectMeta, d.ObjectMeta, fm) || !serviceSpecEqual(o.Spec, d.Spec):
			add(KindService, VerbUpdate, d.ObjectMeta, d)
		}
	}

	wantSlice := map[key]bool{}
	for _, d := range cd.EndpointSlices {
		k := key{Namespace: d.Namespace, Name: d.Name}
		wantSlice[k] = true
		o := ci.ix.Slices[k]
		switch {
		case o == nil:
			add(KindEndpointSlice, VerbCreate, d.ObjectMeta, d)
		case !names.IsManaged(o.Labels):
		case o.AddressType != d.AddressType: // immutable
			add(KindEndpointSlice, VerbDelete, d.ObjectMeta, nil)
			add(KindEndpointSlice, VerbCreate, d.ObjectMeta, d)
		case !metaMatches(o.ObjectMeta, d.ObjectMeta, fm) || !endpointsEqual(o.Endpoints, d.Endpoints) || !slicePortsEqual(o.Ports, d.Ports):
			add(KindEndpointSlice, VerbUpdate, d.ObjectMeta, d)
		}
	}

	for k, conds := range cd.ExportConditions {
		o := ci.exports[k]
		if o == nil {
			continue
		}
		if merged, changed := mergeConditions(o.Status.Conditions, conds); changed {
			e := o.DeepCopy()
			e.Status.Conditions = merged
			add(KindServiceExportStatus, VerbStatus, e.ObjectMeta, e)
		}
	}

	held := map[string]bool{}
	for _, h := range cd.Held {
		held[h.Kind+"/"+h.Namespace+"/"+h.Name] = true
	}
	stale := func(kind string, o metav1.ObjectMeta, service string, wanted map[key]bool) bool {
		return service != "" && names.IsManaged(o.Labels) && !wanted[key{Namespace: o.Namespace, Name: o.Name}] &&
			!held[kind+"/"+o.Namespace+"/"+o.Name] && inScope(obs, key{Namespace: o.Namespace, Name: service})
	}
	// Stale objects: besides the managed-by label each kind must carry the mark sync gives it, so
	// that objects other kubectl-mcs commands created are never collected here, and the mark must
	// name a service this observation decides.
	for _, o := range ci.ServiceImports {
		svc := ""
		if o.Annotations[names.DerivedServiceAnnotation] != "" {
			svc = o.Name
		}
		if stale(KindServiceImport, o.ObjectMeta, svc, wantImp) {
			add(KindServiceImport, VerbDelete, o.ObjectMeta, nil)
		}
	}
	for _, o := range ci.Services {
		if stale(KindService, o.ObjectMeta, o.Labels[mcsv1beta1.LabelServiceName], wantSvc) {
			add(KindService, VerbDelete, o.ObjectMeta, nil)
		}
	}
	for _, o := range ci.EndpointSlices {
		if o.Labels[mcsv1beta1.LabelSourceCluster] != "" && stale(KindEndpointSlice, o.ObjectMeta, o.Labels[mcsv1beta1.LabelServiceName], wantSlice) {
			add(KindEndpointSlice, VerbDelete, o.ObjectMeta, nil)
		}
	}
	return out
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
