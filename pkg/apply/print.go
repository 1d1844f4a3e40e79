package apply

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Report prints items written by another path than Apply (an Update under a precondition) the way
// Apply does: one line each with op, or the objects under -o yaml|json.
func (f *Flags) Report(out io.Writer, items []Item, op string) error {
	printed := make([]printers.Written, 0, len(items))
	for _, it := range items {
		printed = append(printed, it.written())
		if !f.Print.Documents() {
			if err := f.Print.PrintLine(out, it.written(), f.Operation(op)); err != nil {
				return err
			}
		}
	}
	return f.Print.PrintObjects(out, printed)
}

// ResourceName is kubectl's singular name of a resource ("customresourcedefinition",
// "clusterproperty.about.k8s.io").
func ResourceName(gvr schema.GroupVersionResource) string { return resourceName(gvr) }
