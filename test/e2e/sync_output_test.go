//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSyncOutputs: sync's -o json speaks the camelCase of every other document, conflicts
// included, one-shot and with --watch; -o name prints one CLUSTER: RESOURCE/NAME line per object
// written, as the other writing commands, with the conflicts as warnings on stderr.
func TestSyncOutputs(t *testing.T) {
	ns := typeConflict(t, "e2e-syncout")
	wantKeys := []string{"disagreeing", "losing", "message", "namespace", "reason", "service", "total", "winner"}

	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers, "--dry-run=client", "-o", "json")
	var rep struct {
		Conflicts []map[string]any `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Conflicts) != 1 {
		t.Fatalf("json report: %v\n%s", err, r.stdout)
	}
	if keys := slices.Sorted(maps.Keys(rep.Conflicts[0])); !slices.Equal(keys, wantKeys) {
		t.Errorf("-o json conflict keys %v, want %v", keys, wantKeys)
	}

	r = mustMCS(t, "sync", "-n", ns, "--contexts", allMembers, "-o", "name")
	line := regexp.MustCompile(`^member[123]: (service|endpointslice\.discovery\.k8s\.io|serviceexport\.multicluster\.x-k8s\.io|serviceimport\.multicluster\.x-k8s\.io)/[a-z0-9.-]+$`)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("-o name line %q", l)
		}
	}
	for _, want := range []string{"member3: serviceimport.multicluster.x-k8s.io/web", "member3: service/derived-web", "member1: serviceexport.multicluster.x-k8s.io/web"} {
		if !slices.Contains(lines, want) {
			t.Errorf("-o name lacks %q:\n%s", want, r.stdout)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(lines)))) != len(lines) {
		t.Errorf("-o name names an object twice:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "Warning: TypeConflict in "+ns+"/web: ") {
		t.Errorf("-o name: no warning for the conflict on stderr %q", r.stderr)
	}

	// --watch -o json: the conflicts line has the same keys.
	w := startWatch(t, ns, "-o", "json")
	var conflicts []map[string]any
	waitFor(t, "a conflicts line", func() bool {
		for _, l := range strings.Split(w.out.String(), "\n") {
			var v struct {
				Conflicts []map[string]any `json:"conflicts"`
			}
			if json.Unmarshal([]byte(l), &v) == nil && len(v.Conflicts) > 0 {
				conflicts = v.Conflicts
				return true
			}
		}
		return false
	})
	if keys := slices.Sorted(maps.Keys(conflicts[0])); !slices.Equal(keys, wantKeys) {
		t.Errorf("--watch -o json conflict keys %v, want %v", keys, wantKeys)
	}
	w.kill()

	// --watch -o name: a line per object as it is written.
	w = startWatch(t, ns, "-o", "name")
	waitFor(t, "the conflict's warning", func() bool { return strings.Contains(w.out.String(), "Warning: TypeConflict in "+ns+"/web: ") })
	service(t, "member1", ns, "api")
	userExport(t, "member1", ns, "api")
	waitFor(t, "member3's import of api named", func() bool {
		return strings.Contains(w.out.String(), "member3: serviceimport.multicluster.x-k8s.io/api\n")
	})
	if strings.Contains(w.out.String(), "{") {
		t.Errorf("--watch -o name printed JSON or a table:\n%s", w.out.String())
	}
}
