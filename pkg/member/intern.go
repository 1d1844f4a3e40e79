package member

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// A decoded object has every string in an allocation of its own: the same label keys, namespace,
// managers and kinds repeated in every cached object cost more than the object's own data. The
// caches hold one copy of each such string (interned), in a table of bounded size, so that a
// clusterset of unusual strings cannot grow it without end: past the bound a string stays as
// decoded.

const internMax = 1 << 14

type interner struct {
	mu   sync.Mutex
	strs map[string]string
	raws map[string][]byte // field sets, shared read-only by the objects that hold them
}

var shared = &interner{strs: map[string]string{}, raws: map[string][]byte{}}

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) < internMax {
		in.strs[s] = s
	}
	return s
}

func (in *interner) raw(b []byte) []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.raws[string(b)]; ok {
		return c
	}
	if len(in.raws) < internMax {
		in.raws[string(b)] = b
	}
	return b
}

// lowCardinality are the labels whose values repeat across objects: who manages them and which
// cluster a copy came from. Other values (service names) are left as they are.
var lowCardinality = map[string]bool{
	names.ManagedByLabel: true, names.EndpointSliceManagedByLabel: true, mcsv1beta1.LabelSourceCluster: true,
	"app.kubernetes.io/name": true, "app.kubernetes.io/part-of": true, "app.kubernetes.io/component": true,
}

// internMeta interns the metadata strings that repeat across objects. The maps are rebuilt: a
// key cannot be swapped for its interned copy in place.
func internMeta(o metav1.Object) {
	o.SetNamespace(shared.str(o.GetNamespace()))
	if l := o.GetLabels(); len(l) > 0 {
		out := make(map[string]string, len(l))
		for k, v := range l {
			if lowCardinality[k] {
				v = shared.str(v)
			}
			out[shared.str(k)] = v
		}
		o.SetLabels(out)
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		out := make(map[string]string, len(a))
		for k, v := range a {
			out[shared.str(k)] = v
		}
		o.SetAnnotations(out)
	}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = shared.str(refs[i].APIVersion), shared.str(refs[i].Kind)
		}
	}
}
