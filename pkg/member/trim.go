package member

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Trim drops from o, in place, what no reader of the caches uses and what costs most of a cached
// object's memory at scale (snapshot/cached.go defines it, and the engine never wants or compares
// any of it): of the managedFields entries of keep, all but the parts snapshot.OwnedFieldsKept
// names (sync decides from them which labels, annotations and spec fields it owns) and the time;
// of every other manager's, all but who and how (each stays, in its place, so that an entry of
// keep's has the index it has on the server); with keep "", every entry; the annotations
// snapshot.DroppedAnnotation names; of the EndpointSlices keep's sync copied (names.IsManaged),
// their content, for its digest (snapshot.ToDigest); of other EndpointSlices what slice() drops.
// The strings that repeat across objects are interned. A writer that needs the whole managedFields reads the
// object live.
func Trim(o metav1.Object, keep string) {
	if mf := o.GetManagedFields(); len(mf) > 0 {
		var kept []metav1.ManagedFieldsEntry
		for _, e := range mf {
			switch {
			case keep == "":
			case e.Manager == keep:
				kept = append(kept, metav1.ManagedFieldsEntry{Manager: shared.str(e.Manager), Operation: metav1.ManagedFieldsOperationType(shared.str(string(e.Operation))),
					APIVersion: shared.str(e.APIVersion), FieldsType: shared.str(e.FieldsType), FieldsV1: ownedFields(e.FieldsV1), Subresource: shared.str(e.Subresource)})
			default:
				kept = append(kept, metav1.ManagedFieldsEntry{Manager: shared.str(e.Manager), Operation: metav1.ManagedFieldsOperationType(shared.str(string(e.Operation))),
					Subresource: shared.str(e.Subresource)})
			}
		}
		o.SetManagedFields(kept)
	}
	kind := snapshot.KindService // any kind but a slice: what is dropped from every kind
	if _, ok := o.(*discoveryv1.EndpointSlice); ok {
		kind = snapshot.KindEndpointSlice
	}
	if a := o.GetAnnotations(); a != nil {
		for k := range a {
			if _, drop := snapshot.DroppedAnnotation(kind, k); drop {
				delete(a, k)
			}
		}
		o.SetAnnotations(a)
	}
	if s, ok := o.(*discoveryv1.EndpointSlice); ok {
		if keep != "" && names.IsManaged(s.Labels) {
			snapshot.ToDigest(s) // a copy of ours: whether it still says what we want is all we read
		} else {
			slice(s)
		}
	}
	internMeta(o)
}

// slice drops of each endpoint what neither the engine (which copies addresses, conditions,
// hostname and zone) nor status (which tells endpoints apart by their target's kind, namespace,
// name and UID) reads: nodeName, hints, deprecatedTopology, and the target's other fields. A copy
// of ours keeps its nodeName and hints, which status compares (snapshot.SliceDigest).
func slice(s *discoveryv1.EndpointSlice) {
	ours := names.IsManaged(s.Labels)
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		e.DeprecatedTopology = nil
		if !ours {
			e.NodeName, e.Hints = nil, nil
		}
		if e.Zone != nil {
			z := shared.str(*e.Zone)
			e.Zone = &z
		}
		if t := e.TargetRef; t != nil {
			e.TargetRef = &corev1.ObjectReference{Kind: shared.str(t.Kind), Namespace: shared.str(t.Namespace), Name: t.Name, UID: t.UID}
		}
	}
}

// ownedFields keeps of a FieldsV1 set only the parts snapshot.OwnedFieldsKept names; one it
// cannot read stays whole.
func ownedFields(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil {
		return nil
	}
	var set map[string]json.RawMessage
	if json.Unmarshal(f.Raw, &set) != nil {
		return f
	}
	out := map[string]any{}
	for _, path := range snapshot.OwnedFieldsKept {
		v, ok := set[path[0]]
		if !ok {
			continue
		}
		if len(path) == 1 {
			out[path[0]] = v
			continue
		}
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) != nil {
			return f
		}
		if w, ok := sub[path[1]]; ok {
			into, _ := out[path[0]].(map[string]json.RawMessage)
			if into == nil {
				into = map[string]json.RawMessage{}
				out[path[0]] = into
			}
			into[path[1]] = w
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return f
	}
	return &metav1.FieldsV1{Raw: shared.raw(raw)}
}

// trim is Trim as an informer's transform; with keep set (sync's caches), what keep wrote is then
// held as a record.
func trim(keep string) func(any) (any, error) {
	return func(obj any) (any, error) {
		o, err := meta.Accessor(obj)
		if err != nil { // a tombstone, which holds what was cached
			return obj, nil
		}
		Trim(o, keep)
		if keep == "" {
			return obj, nil
		}
		return toRecord(obj), nil
	}
}

// transforms are the informers' transforms by kind: the mcs-api kinds decoded into typed objects
// (decode.Transform), every kind trimmed.
func transforms(fieldManager string) map[string]cache.TransformFunc {
	slim := trim(fieldManager)
	return map[string]cache.TransformFunc{
		snapshot.KindService: slim, snapshot.KindEndpointSlice: slim, snapshot.KindNamespace: slim,
		snapshot.KindServiceExport: then(decode.Transform[mcsv1beta1.ServiceExport], slim),
		snapshot.KindServiceImport: then(decode.Transform[mcsv1beta1.ServiceImport], slim),
	}
}

// then chains two transforms.
func then(first, second func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		obj, err := first(obj)
		if err != nil {
			return nil, err
		}
		return second(obj)
	}
}
