package apply

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Print reports items written by another path than Apply (an Update under a precondition) the way
// Apply does: one line each with op, or the objects under -o yaml|json.
func (f *Flags) Print(out io.Writer, items []Item, op string) error {
	if f.Output == "" || f.Output == "name" {
		for _, it := range items {
			f.printLine(out, it, op)
		}
	}
	return f.printObjects(out, items)
}

// ResourceName is kubectl's singular name of a resource ("customresourcedefinition",
// "clusterproperty.about.k8s.io").
func ResourceName(gvr schema.GroupVersionResource) string { return resourceName(gvr) }
