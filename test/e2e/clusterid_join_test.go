//go:build e2e

package e2e

// A member's cluster ID is read whenever it joins, and what the clusterset recorded under an ID
// it no longer has moves to the new one.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterIDProperty gives member c the cluster ID id by its ClusterProperty (init --contexts
// c=id --clusterset), removed when the test ends: every other test knows c by its context name.
func clusterIDProperty(t *testing.T, c, id string) {
	t.Helper()
	t.Cleanup(func() {
		for _, n := range []string{"cluster.clusterset.k8s.io", "clusterset.k8s.io"} {
			_ = clients[c].dyn.Resource(cpGVR).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	mustMCS(t, "init", "--contexts", c+"="+id, "--clusterset", "e2e-set")
}

// copiesBySource is, in cluster c, the addresses of the copies of ns/name by source cluster.
func copiesBySource(t *testing.T, c, ns, name string) map[string][]string {
	t.Helper()
	return slicesBySource(t, c, ns, name, addresses)
}

// importedFrom is status.clusters of the ServiceImport ns/name in c (none while there is none).
func importedFrom(t *testing.T, c, ns, name string) []string {
	t.Helper()
	var out []string
	si := get(t, c, siGVR("v1beta1"), ns, name)
	if si == nil {
		return nil
	}
	clusters, _, _ := unstructured.NestedSlice(si.Object, "status", "clusters")
	for _, cl := range clusters {
		out = append(out, fmt.Sprint(cl.(map[string]any)["cluster"]))
	}
	return out
}

// onlyFrom says what is wrong with the consumers' copies and imports of ns/serve, when they are
// not exactly the endpoints want under source cluster id.
func onlyFrom(t *testing.T, ns, id string, want []string) string {
	t.Helper()
	return onlyFromIn(t, ns, id, want, "member1", "member2")
}

// onlyFromIn is onlyFrom in the given clusters.
func onlyFromIn(t *testing.T, ns, id string, want []string, in ...string) string {
	t.Helper()
	var bad []string
	for _, c := range in {
		if got := copiesBySource(t, c, ns, "serve"); !maps.EqualFunc(got, map[string][]string{id: want}, slices.Equal) {
			bad = append(bad, fmt.Sprintf("%s: copies by source %v", c, got))
		}
		if got := importedFrom(t, c, ns, "serve"); !slices.Equal(got, []string{id}) {
			bad = append(bad, fmt.Sprintf("%s: import from %v", c, got))
		}
	}
	return strings.Join(bad, "; ")
}

// A member down when `sync --watch` starts is known by its context name until it joins; it then
// joins under the ID its ClusterProperty says (east), and the consumers keep only east's copies
// of its endpoints: before, it joined as member3, and its copies were written beside east's,
// which stood for an unread cluster for good (the same endpoints twice, dead ones forever).
func TestMemberDownAtStartJoinsUnderItsPropertyID(t *testing.T) {
	ns := namespace(t, "e2e-joinid", members...)
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve")
	userExport(t, "member3", ns, "serve")
	clusterIDProperty(t, "member3", "east")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	want := sourceIPs(t, "member3", ns, "serve")
	if why := onlyFrom(t, ns, "east", want); why != "" {
		t.Fatalf("after a sync with member3 up: %s", why)
	}

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	w := startWatch(t, ns)
	waitFor(t, "sync --watch to find member3 down", func() bool { return strings.Contains(w.out.String(), "member not read yet") })
	testbed(t, "start", "member3")
	restarted = true
	// Until it joins, and one round after, and for a while: east's copies alone, never member3's.
	joined := time.Time{}
	for deadline := time.Now().Add(60 * time.Second); joined.IsZero() || time.Since(joined) < 5*time.Second; time.Sleep(500 * time.Millisecond) {
		if why := onlyFrom(t, ns, "east", sourceIPs(t, "member3", ns, "serve")); why != "" {
			t.Fatalf("member3 back: %s\nsync --watch:\n%s", why, w.out.String())
		}
		if joined.IsZero() && strings.Contains(w.out.String(), `"member joins under the cluster ID its ClusterProperty says" context="member3" was="member3" cluster="east"`) {
			joined = time.Now()
		}
		if joined.IsZero() && time.Now().After(deadline) {
			t.Fatalf("member3 did not join as east:\n%s", w.out.String())
		}
	}
	if out := w.out.String(); strings.Contains(out, "derived-serve-member3-") {
		t.Errorf("sync --watch wrote copies under member3:\n%s", out)
	}
}

// Copies recorded under a member's context name move to the ID its ClusterProperty gives it
// later: one sync writes east's and deletes member3's; the import names east alone.
func TestCopiesMoveToTheClusterPropertyID(t *testing.T) {
	ns := namespace(t, "e2e-moveid", members...)
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve")
	userExport(t, "member3", ns, "serve")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	want := sourceIPs(t, "member3", ns, "serve")
	if why := onlyFrom(t, ns, "member3", want); why != "" {
		t.Fatalf("before the property: %s", why)
	}
	clusterIDProperty(t, "member3", "east")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	if why := onlyFrom(t, ns, "east", want); why != "" {
		t.Errorf("after a sync with member3's property saying east: %s", why)
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("a second sync:\n%s", r.stdout)
	}
}

// Members down when `sync --watch` starts, whose ClusterProperties swap their context names
// (member2 says member3, member3 says member2) or take each other's round a cycle (member1 says
// member2, member2 member3, member3 member1), all join under their properties' IDs once they
// answer: none waits for another to join (they did, forever). Every member holds each
// exporter's endpoints under that exporter's property's ID.
func TestSwappedClusterIDsJoin(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  map[string]string // context -> its property's cluster ID
	}{
		{"swap", map[string]string{"member2": "member3", "member3": "member2"}},
		{"3-cycle", map[string]string{"member1": "member2", "member2": "member3", "member3": "member1"}},
	} {
		t.Run(tc.name, func(t *testing.T) { swappedIDsJoin(t, tc.ids) })
	}
}

func swappedIDsJoin(t *testing.T, ids map[string]string) {
	ns := namespace(t, "e2e-swapid", members...)
	ctxs := slices.Sorted(maps.Keys(ids))
	for _, c := range ctxs {
		deployment(t, c, ns, "serve", 1)
		service(t, c, ns, "serve")
		userExport(t, c, ns, "serve")
	}
	ips := map[string][]string{}
	for _, c := range ctxs {
		clusterIDProperty(t, c, ids[c])
		ips[c] = sourceIPs(t, c, ns, "serve")
	}
	for _, c := range ctxs {
		testbed(t, "stop", c)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			for _, c := range ctxs {
				testbed(t, "start", c)
			}
		}
	})
	w := startWatch(t, ns)
	waitFor(t, "sync --watch to find "+strings.Join(ctxs, ", ")+" down", func() bool {
		return strings.Count(w.out.String(), "member not read yet") >= len(ctxs)
	})
	for _, c := range ctxs {
		testbed(t, "start", c)
	}
	restarted = true
	for _, consumer := range members {
		want := map[string][]string{}
		for _, c := range ctxs {
			want[ids[c]] = ips[c] // an exporter's derived Service holds its own endpoints too
		}
		waitFor(t, fmt.Sprintf("%s to hold each exporter's endpoints under its property's ID %v", consumer, ids), func() bool {
			return maps.EqualFunc(copiesBySource(t, consumer, ns, "serve"), want, slices.Equal)
		})
	}
	for _, c := range ctxs {
		if !strings.Contains(w.out.String(), `"member joins under the cluster ID its ClusterProperty says" context="`+c+`"`) {
			t.Errorf("sync --watch did not say %s joined under its property's ID:\n%s", c, w.out.String())
		}
	}
}
