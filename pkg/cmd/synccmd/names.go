package synccmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// resources are kubectl's names of the kinds sync writes, as -o name prints them.
var resources = map[string]string{
	snapshot.KindService:       "service",
	snapshot.KindEndpointSlice: "endpointslice.discovery.k8s.io",
	snapshot.KindServiceExport: "serviceexport." + mcsapi.Group,
	snapshot.KindServiceImport: "serviceimport." + mcsapi.Group,
}

// printNames writes -o name: one "CLUSTER: RESOURCE/NAME" line per object written, in the order
// of its first write, as the other writing commands print theirs.
func printNames(out io.Writer, cs []ChangeRow) error {
	for _, r := range byObject(cs) {
		resource, ok := resources[r.Kind]
		if !ok {
			resource = strings.ToLower(r.Kind)
		}
		_, name, _ := strings.Cut(r.Object, "/")
		if err := printers.PrintName(out, r.Cluster, resource, name); err != nil {
			return err
		}
	}
	return nil
}

// warnConflicts writes one warning line per conflict, for -o name, whose lines have no room for
// them: "Warning: TypeConflict in demo/web: Conflicting type. ...".
func warnConflicts(w io.Writer, cs []engine.Conflict) {
	for _, c := range cs {
		fmt.Fprintf(w, "Warning: %s in %s/%s: %s\n", c.Reason, c.Namespace, c.Service, c.Message)
	}
}
