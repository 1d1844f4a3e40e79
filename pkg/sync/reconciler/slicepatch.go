package reconciler

// EndpointSlice updates: the write every endpoint change makes in every importing cluster is a
// JSON merge patch, which costs the apiserver less than a server-side apply of the same fields
// (`make bench`'s slice and apply floors).

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// slicePatch is the merge patch that makes last (the slice as observed) what obj (its apply
// configuration, applyObject) says, with what an apply would keep and remove:
//   - our labels and annotations set; those our managedFields say we set and obj no longer has,
//     removed; everybody else's left alone (a merge patch merges maps);
//   - the owner references: ours, and the others' that are not a controller (a merge patch
//     replaces a list whole, where an apply keeps the others' entries; the old derived Service,
//     a controller like the new one, must go, as the apiserver refuses two);
//   - endpoints and ports, which an apply replaces whole too, named even when empty;
//   - the UID the object must have: another one makes the apiserver refuse the patch.
func slicePatch(obj map[string]any, last metav1.Object, fm string) ([]byte, error) {
	for _, f := range []string{"endpoints", "ports"} {
		if obj[f] == nil {
			obj[f] = []any{} // replaced whole: a missing list would keep the old one
		}
	}
	if last == nil {
		return json.Marshal(obj)
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	for _, f := range []struct {
		field string
		have  map[string]string
	}{{"labels", last.GetLabels()}, {"annotations", last.GetAnnotations()}} {
		want, _ := md[f.field].(map[string]any)
		if !hasOther(f.have, want) {
			continue // nothing to remove: spare parsing managedFields on every endpoint change
		}
		for k := range engine.OwnedMetaKeys(last.GetManagedFields(), fm, f.field) {
			if _, on := f.have[k]; !on {
				continue
			}
			if _, keep := want[k]; keep {
				continue
			}
			if want == nil {
				want = map[string]any{}
				md[f.field] = want
			}
			want[k] = nil // removes it
		}
	}
	refs, _ := md["ownerReferences"].([]any)
	ours := map[types.UID]bool{}
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			uid, _ := m["uid"].(string)
			ours[types.UID(uid)] = true
		}
	}
	for _, o := range last.GetOwnerReferences() {
		if ours[o.UID] || o.Controller != nil && *o.Controller {
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o)
		if err != nil {
			return nil, err
		}
		refs = append(refs, u)
	}
	if len(refs) > 0 || len(last.GetOwnerReferences()) > 0 {
		if refs == nil {
			refs = []any{}
		}
		md["ownerReferences"] = refs
	}
	return json.Marshal(obj)
}

// hasOther reports whether have holds a key that want does not.
func hasOther(have map[string]string, want map[string]any) bool {
	for k := range have {
		if _, ok := want[k]; !ok {
			return true
		}
	}
	return false
}
