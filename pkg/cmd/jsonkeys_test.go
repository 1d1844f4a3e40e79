package cmd

import (
	"reflect"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/internal/jsonkeys"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/synccmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd/versioncmd"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// TestJSONKeys: every document a command prints with -o json speaks one vocabulary, lowerCamelCase
// keys (sync --watch's lines are checked in synccmd, whose type is its own).
func TestJSONKeys(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[status.MultiClusterServiceStatusList](), // status
		reflect.TypeFor[status.KarmadaServiceStatusList](),      // status --karmada
		reflect.TypeFor[diagnose.Report](),                      // diagnose
		reflect.TypeFor[synccmd.Report](),                       // sync
		reflect.TypeFor[versioncmd.Info](),                      // version
	} {
		for _, bad := range jsonkeys.Check(typ) {
			t.Error(bad)
		}
	}
}
