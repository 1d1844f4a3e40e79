package member

import (
	"encoding/json"

	"k8s.io/client-go/tools/cache"
)

// What the caches hold, for Config.Cached: each event adds the difference it makes, so the sum
// is kept without walking the caches.

// cachedSize estimates what obj takes, cheaply: its protobuf size (the built-in kinds, as
// trimmed), else its JSON size (the mcs-api kinds, which have no protobuf). The heap holds 2.5 to
// 4 times that in Go's structures (pkg/install's sizing rule has the measured figures).
func cachedSize(obj any) int {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch o := obj.(type) {
	case nil:
		return 0
	case interface{ Size() int }:
		return o.Size()
	default:
		b, err := json.Marshal(o)
		if err != nil {
			return 0
		}
		return len(b)
	}
}

// count tells Config.Cached what an event changed: old leaves the cache (nil: none), obj enters
// it (nil: none).
func (m *Cache) count(kind string, old, obj any) {
	f := m.cfg.Cached
	if f == nil {
		return
	}
	objects := 0
	if old == nil {
		objects++
	}
	if obj == nil {
		objects--
	}
	f(m.ID(), kind, objects, cachedSize(obj)-cachedSize(old))
}
