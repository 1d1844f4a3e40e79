package clusterset

import (
	"strings"
	"testing"
)

func TestValidateService(t *testing.T) {
	for _, tc := range []struct {
		service string
		all     bool
		want    string
	}{
		{"", true, ""},
		{"serve", false, ""},
		{"serve", true, "a service cannot be diagnosed by name across all namespaces: drop -A or the SERVICE"},
		{"Serve_1", false, `service "Serve_1": not a valid Service name`},
	} {
		err := ValidateService(tc.service, tc.all, "diagnosed")
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q -A=%v: %v, want %q", tc.service, tc.all, err, tc.want)
		}
	}
}
