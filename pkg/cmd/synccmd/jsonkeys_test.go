package synccmd

import (
	"reflect"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/internal/jsonkeys"
)

// TestWatchJSONKeys: sync --watch -o json's lines speak the vocabulary of every -o json.
func TestWatchJSONKeys(t *testing.T) {
	for _, bad := range jsonkeys.Check(reflect.TypeFor[changeLine]()) {
		t.Error(bad)
	}
}
