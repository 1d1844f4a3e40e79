package engine

// Ownership: which fields of an object sync set, as its managedFields say. A field that the
// desired object leaves unset is somebody else's, and no reason to write, unless sync set it
// earlier: then the apply that leaves it out removes it, and that is a write the plan needs.

import (
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// owned is one object's managedFields read for one field manager, on the main resource. The
// caches keep only the parts of its entries that snapshot.OwnedFieldsKept names, which is all the
// engine asks about.
type owned struct {
	mf []metav1.ManagedFieldsEntry
	fm string
}

// has reports whether the manager set the field at path (FieldsV1 steps: "f:spec",
// "f:ports", `k:{"port":80,"protocol":"TCP"}`).
func (o owned) has(path ...string) bool {
	for _, e := range o.mf {
		if e.Manager != o.fm || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var node any
		if json.Unmarshal(e.FieldsV1.Raw, &node) != nil {
			continue
		}
		for _, step := range path {
			m, _ := node.(map[string]any)
			node = m[step]
		}
		if node != nil {
			return true
		}
	}
	return false
}

// stale reports a field that differs from what is wanted while the desired object leaves it
// unset: a reason to write only when sync set it.
func (o owned) stale(differs bool, path ...string) bool {
	return differs && o.has(path...)
}

// portFieldKey is the managedFields key of a Service port: its list-map key, port and protocol.
func portFieldKey(port int32, protocol string) string {
	return fmt.Sprintf(`k:{"port":%d,"protocol":%q}`, port, protocol)
}

// keptSubset reports whether have holds every entry of want that the caches can hold of an object
// of kind: an annotation they drop is never seen, so it is no reason to write.
func keptSubset(kind string, want, have map[string]string) bool {
	for k, v := range want {
		if _, dropped := snapshot.DroppedAnnotation(kind, k); dropped {
			continue
		}
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// keptAnnotations are the exported annotations an import can carry, and the names and reasons of
// those it cannot (the caches drop them), sorted by name.
func keptAnnotations(exported map[string]string) (kept map[string]string, notKept []string) {
	for k, v := range exported {
		if why, dropped := snapshot.DroppedAnnotation(snapshot.KindServiceImport, k); dropped {
			notKept = append(notKept, fmt.Sprintf("%q (%s)", k, why))
			continue
		}
		if kept == nil {
			kept = map[string]string{}
		}
		kept[k] = v
	}
	sort.Strings(notKept)
	return kept, notKept
}
