package reconciler

import (
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recentTTL bounds how long a write is remembered when its watch event never comes (the object
// was changed or deleted again by someone else in between, say).
const recentTTL = 30 * time.Second

// recent remembers what this process wrote to one member until its informer has caught up.
// Without it, a sync that runs before the watch event of our own write arrives would decide from
// the stale cache and make the same write again. Resource versions are compared as integers, as
// client-go's mutation cache does; an apiserver backed by etcd issues them in increasing order.
type recent struct {
	mu   sync.Mutex
	objs map[string]written // kind/namespace/name
}

type written struct {
	obj     metav1.Object // as written, or as last seen before a delete
	rv      uint64
	kind    string
	ns      string
	at      time.Time
	deleted bool
}

func rv(o metav1.Object) uint64 {
	v, _ := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
	return v
}

func recentKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// wrote records the object an apply returned.
func (r *recent) wrote(kind string, o metav1.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objs == nil {
		r.objs = map[string]written{}
	}
	r.objs[recentKey(kind, o.GetNamespace(), o.GetName())] = written{obj: o, rv: rv(o), kind: kind, ns: o.GetNamespace(), at: time.Now()}
}

// deleted records the delete of an object as it was last seen.
func (r *recent) deleted(kind string, o metav1.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objs == nil {
		r.objs = map[string]written{}
	}
	r.objs[recentKey(kind, o.GetNamespace(), o.GetName())] = written{obj: o, rv: rv(o), kind: kind, ns: o.GetNamespace(), at: time.Now(), deleted: true}
}

// gone forgets what we remember of an object the informer saw deleted, unless what we remember
// is a newer object of the same name (a delete and re-create of ours).
func (r *recent) gone(kind string, o metav1.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recentKey(kind, o.GetNamespace(), o.GetName())
	if w, ok := r.objs[k]; ok && w.obj.GetUID() == o.GetUID() {
		delete(r.objs, k)
	}
}

// echo reports whether o is, exactly, an object this process wrote and still remembers: the
// watch event that brings it decides nothing new, since the sync that wrote it decided again from
// what the write returned (its rounds run until nothing is left to write). The record is then
// forgotten: the informer's store, updated before its handlers run, holds the object now. Kept,
// it would stay until its service is synced again, a second copy of every object we wrote that
// each overlay of its namespace walks.
func (r *recent) echo(kind string, o metav1.Object) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recentKey(kind, o.GetNamespace(), o.GetName())
	w, ok := r.objs[k]
	if !ok || w.deleted || w.obj.GetUID() != o.GetUID() || w.rv != rv(o) || w.rv == 0 {
		return false
	}
	delete(r.objs, k)
	return true
}

// overlay returns the cached objects of one kind in ns with our newer writes in place of what the
// cache still lacks. keep selects which remembered creations belong in the result (the same
// filter the cache lookup used).
func overlay[T metav1.Object](r *recent, kind, ns string, cached []T, keep func(T) bool) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.objs) == 0 {
		return cached
	}
	now := time.Now()
	out := make([]T, 0, len(cached))
	seen := map[string]bool{}
	for _, o := range cached {
		k := recentKey(kind, ns, o.GetName())
		seen[k] = true
		w, ok := r.objs[k]
		switch {
		case !ok:
			out = append(out, o)
		case now.Sub(w.at) > recentTTL || rv(o) > w.rv || (!w.deleted && rv(o) == w.rv):
			delete(r.objs, k) // the cache has caught up, or someone wrote after us
			out = append(out, o)
		case w.deleted:
			// still in the cache, but gone
		default:
			out = append(out, w.obj.(T))
		}
	}
	for k, w := range r.objs {
		if w.kind != kind || w.ns != ns || seen[k] {
			continue
		}
		o := w.obj.(T)
		if !keep(o) {
			continue // another service's
		}
		if w.deleted || now.Sub(w.at) > recentTTL {
			delete(r.objs, k) // the cache no longer has it either
			continue
		}
		out = append(out, o)
	}
	return out
}
