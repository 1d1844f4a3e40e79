package member

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied is kubectl's client-side apply record: a whole copy of the object, read by nobody
// here.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Trim drops from o, in place, what no reader of the caches uses and what costs most of a cached
// object's memory at scale: of the managedFields entries of keep, the fields other than metadata
// labels and annotations (sync decides from them which labels and annotations it owns); of every
// other manager's, all but who and how (each stays, in its place, so that an entry of keep's has
// the index it has on the server); with keep "", every entry; and kubectl's last-applied
// annotation. A writer that needs the whole managedFields reads the object live.
func Trim(o metav1.Object, keep string) {
	if mf := o.GetManagedFields(); len(mf) > 0 {
		var kept []metav1.ManagedFieldsEntry
		for _, e := range mf {
			switch {
			case keep == "":
			case e.Manager == keep:
				e.FieldsV1 = metadataFields(e.FieldsV1)
				kept = append(kept, e)
			default:
				kept = append(kept, metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource})
			}
		}
		o.SetManagedFields(kept)
	}
	if a := o.GetAnnotations(); a != nil {
		if _, ok := a[lastApplied]; ok {
			delete(a, lastApplied)
			o.SetAnnotations(a)
		}
	}
}

// metadataFields keeps of a FieldsV1 set only metadata.labels and metadata.annotations; one it
// cannot read stays whole.
func metadataFields(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil {
		return nil
	}
	var set struct {
		Metadata map[string]json.RawMessage `json:"f:metadata"`
	}
	if json.Unmarshal(f.Raw, &set) != nil {
		return f
	}
	meta := map[string]json.RawMessage{}
	for _, k := range []string{"f:labels", "f:annotations"} {
		if v, ok := set.Metadata[k]; ok {
			meta[k] = v
		}
	}
	out := map[string]any{}
	if len(meta) > 0 {
		out["f:metadata"] = meta
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return f
	}
	return &metav1.FieldsV1{Raw: raw}
}

// trim is Trim as an informer's transform.
func trim(keep string) func(any) (any, error) {
	return func(obj any) (any, error) {
		if o, err := meta.Accessor(obj); err == nil { // not a tombstone, which holds what was cached
			Trim(o, keep)
		}
		return obj, nil
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
