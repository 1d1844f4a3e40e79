package member

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"unique"
	"weak"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// A record is how the caches hold an object sync wrote in a member (a derived Service, an import
// or a copied EndpointSlice of ours): most of what a clusterset's caches hold, and as API objects
// their Go structures and small maps cost about three times their content. A record keeps the
// name and version the stores key and compare on, the labels as one string shared by every
// object that carries the same set (interned with package unique, so that a set no object holds
// any more goes), the managedFields entries Trim kept, and the rest encoded: protobuf for
// Services and slices, CBOR for imports (the mcs-api types have no protobuf; CBOR is smaller
// and quicker to decode than JSON). Readers get the
// API object back (typed): the stores' objects are read-only, and so are these.
type record struct {
	namespace, name, rv string
	labels              unique.Handle[string]
	managed             []metav1.ManagedFieldsEntry
	body                []byte
	kind                uint8
	// decoded is the object last decoded from the record, held weakly (a weak.Pointer of the
	// record's kind): readers at the same time (a service's pipelines, each observing every
	// member) share one decode, and nothing stays once none of them holds it.
	decoded atomic.Value
}

const (
	recordService uint8 = iota
	recordSlice
	recordImport
)

// GetObjectMeta is what the informer's stores key a record by (meta.Accessor).
func (r *record) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.namespace, Name: r.name, ResourceVersion: r.rv}
}

// Size is about what the record holds, for Config.Cached (cachedSize).
func (r *record) Size() int { return len(r.body) + len(r.rv) + len(r.name) }

// Labels are the record's labels, as a new map.
func (r *record) Labels() map[string]string { return parseLabels(r.labels.Value()) }

// label is one label's value, without building the map.
func (r *record) label(key string) string {
	s := r.labels.Value()
	for s != "" {
		var k, v string
		k, s, _ = strings.Cut(s, "\x00")
		v, s, _ = strings.Cut(s, "\x00")
		if k == key {
			return v
		}
	}
	return ""
}

// toRecord is o as the caches hold it when sync wrote it: a record; anything else as it is.
func toRecord(o any) any {
	switch t := o.(type) {
	case *corev1.Service:
		if names.IsManaged(t.Labels) {
			return encode(o, recordService, &t.ObjectMeta, t.Marshal)
		}
	case *discoveryv1.EndpointSlice:
		if names.IsManaged(t.Labels) {
			return encode(o, recordSlice, &t.ObjectMeta, t.Marshal)
		}
	case *mcsv1beta1.ServiceImport:
		if names.IsManaged(t.Labels) {
			return encode(o, recordImport, &t.ObjectMeta, func() ([]byte, error) { return direct.Marshal(t) })
		}
	}
	return o
}

// encode makes the record of o, whose metadata is m, by marshal; the object's labels and
// managedFields go to the record's own fields, and come back on decoding. An object that does
// not encode stays as it is.
func encode(o any, kind uint8, m *metav1.ObjectMeta, marshal func() ([]byte, error)) any {
	l, mf := m.Labels, m.ManagedFields
	m.Labels, m.ManagedFields = nil, nil
	body, err := marshal()
	m.Labels, m.ManagedFields = l, mf
	if err != nil {
		return o
	}
	return &record{namespace: m.Namespace, name: m.Name, rv: m.ResourceVersion, labels: unique.Make(formatLabels(l)),
		managed: mf, body: body, kind: kind}
}

// typed is the API object of a store's entry: a record decoded, anything else as it is.
func typed(o any) (any, error) {
	r, ok := o.(*record)
	if !ok {
		return o, nil
	}
	switch r.kind {
	case recordService:
		return decodeShared(r, func(s *corev1.Service) (*metav1.ObjectMeta, error) { return &s.ObjectMeta, s.Unmarshal(r.body) })
	case recordSlice:
		return decodeShared(r, func(s *discoveryv1.EndpointSlice) (*metav1.ObjectMeta, error) {
			return &s.ObjectMeta, s.Unmarshal(r.body)
		})
	case recordImport:
		return decodeShared(r, func(s *mcsv1beta1.ServiceImport) (*metav1.ObjectMeta, error) {
			return &s.ObjectMeta, direct.Unmarshal(r.body, s)
		})
	}
	return nil, fmt.Errorf("%s/%s: a cached record of unknown kind %d", r.namespace, r.name, r.kind)
}

// decodeShared is r decoded into a *T: the object a reader still holds, or a new one.
func decodeShared[T any](r *record, decode func(*T) (*metav1.ObjectMeta, error)) (*T, error) {
	if w, ok := r.decoded.Load().(weak.Pointer[T]); ok {
		if t := w.Value(); t != nil {
			return t, nil
		}
	}
	t := new(T)
	m, err := decode(t)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: decoding its cached record: %w", r.namespace, r.name, err)
	}
	m.Labels, m.ManagedFields = r.Labels(), r.managed
	r.decoded.Store(weak.Make(t))
	return t, nil
}

// formatLabels writes a label set as one string, keys sorted: "k1\x00v1\x00k2\x00v2". A key or
// value cannot hold a NUL.
func formatLabels(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l))
	n := 0
	for k, v := range l {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	sort.Strings(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

func parseLabels(s string) map[string]string {
	if s == "" {
		return nil
	}
	out := make(map[string]string, strings.Count(s, "\x00")/2)
	for s != "" {
		var k, v string
		k, s, _ = strings.Cut(s, "\x00")
		v, s, _ = strings.Cut(s, "\x00")
		out[k] = v
	}
	return out
}

// eventObject is what an informer's event carries, as the API object: a tombstone's last state,
// a record decoded.
func eventObject(obj any) (any, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	return typed(obj)
}

// cachedAs is the entry key ("ns/name") of store as *T: nil when absent, an error when it does
// not decode (a record, or an mcs-api object held unstructured: decode.Cached).
func cachedAs[T any](store cache.Store, key string) (*T, error) {
	o, exists, err := store.GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	t, err := typed(o)
	if err != nil {
		return nil, err
	}
	return decode.Entry[T](key, t)
}

// listAs is every entry of objs that is, or decodes into, a *T.
func listAs[T any](objs []any) []*T {
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if t, err := typed(o); err == nil {
			if v, ok := t.(*T); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// managedEntry says whether a store's entry was written by an MCS controller of ours
// (names.IsManaged): a record always was.
func managedEntry(o any) bool {
	if _, ok := o.(*record); ok {
		return true
	}
	a, err := meta.Accessor(o)
	return err == nil && names.IsManaged(a.GetLabels())
}

// labelOf is the value of label key of a store's entry, record or object.
func labelOf(o any, key string) string {
	if r, ok := o.(*record); ok {
		return r.label(key)
	}
	if a, err := meta.Accessor(o); err == nil {
		return a.GetLabels()[key]
	}
	return ""
}
