package export

import (
	"strings"
	"testing"
)

// --strict says what a selection does with a Service it cannot export; a named one always fails.
func TestStrictGoesWithASelection(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		ok   bool
	}{
		{Spec{Target: Target{Service: "serve"}, Strict: true}, false},
		{Spec{Selector: "tier=backend", Strict: true}, true},
		{Spec{All: true, Strict: true}, true},
	} {
		err := c.spec.Validate()
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "--strict goes with -l or --all")) {
			t.Errorf("%+v: %v", c.spec, err)
		}
	}
}

// The error names the cluster and the Service in one line, as every error does.
func TestNotExportableError(t *testing.T) {
	err := &NotExportableError{Cluster: "member2", Namespace: "db", Name: "ext"}
	if want := `cluster "member2": service db/ext is of type ExternalName, which cannot be exported (KEP-1645)`; err.Error() != want {
		t.Errorf("%q, want %q", err.Error(), want)
	}
}
