//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// TestSyncLocalInEveryMember runs one `sync --watch --local=X` per member, as install
// --mode=per-member does: exports of cart from member1 (oldest) and member3 with a port conflict
// converge in every member, each sync writes only in its own member, and a clusterset-wide one-shot
// sync then finds nothing to change. Moving from one sync of the clusterset to the members' own
// replaces no object: serve, imported by a one-shot sync of the clusterset before the members'
// syncs start, keeps the UIDs of its imports, derived Services and copies. With member2's sync stopped, an endpoint change in member3
// still reaches member1, member2's copies stand as they were (none dropped), and member2 catches up
// once its sync is back.
func TestSyncLocalInEveryMember(t *testing.T) {
	ns := namespace(t, "e2e-local", members...)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	waitFor(t, "member1's serve endpoint", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 1 })
	userExport(t, "member1", ns, "serve")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	before := map[string][]string{}
	for _, c := range members {
		before[c] = objectUIDs(t, c, ns, "serve")
	}

	deployment(t, "member1", ns, "cart", 1)
	service(t, "member1", ns, "cart")
	userExport(t, "member1", ns, "cart")
	time.Sleep(1100 * time.Millisecond) // member1's export stays the oldest (1 s timestamps)
	deployment(t, "member3", ns, "cart", 1)
	if out, err := runKubectl("member3", "-n", ns, "create", "service", "clusterip", "cart", "--tcp=8080:8080"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	userExport(t, "member3", ns, "cart")
	for _, c := range []string{"member1", "member3"} {
		waitFor(t, c+"'s endpoint", func() bool { return len(sourceIPs(t, c, ns, "cart")) == 1 })
	}
	src1, src3 := sourceIPs(t, "member1", ns, "cart"), sourceIPs(t, "member3", ns, "cart")

	syncs := map[string]*watcher{}
	for _, c := range members {
		syncs[c] = startWatch(t, ns, "--local", c, "-o", "json")
	}
	converged := func(c string) bool {
		cond := conditions(t, c, ns, "cart")
		return slices.Equal(importedIPs(t, c, ns, "cart", "member1"), src1) &&
			slices.Equal(importedIPs(t, c, ns, "cart", "member3"), src3) &&
			derivedService(t, c, ns, "cart") != nil &&
			(c == "member2" || cond["Ready"] == "True/Exported" && cond["Conflict"] == "True/PortConflict")
	}
	for _, c := range members {
		waitFor(t, c+" converged under its own sync", func() bool { return converged(c) })
	}
	for _, c := range members {
		if got := derivedPorts(t, c, ns); !slices.Equal(got, []string{"8080-8080:8080/TCP", "tcp-80:80/TCP"}) {
			t.Errorf("%s: derived-cart ports %v, want the union, named", c, got)
		}
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("a clusterset-wide sync after the members' syncs wrote:\n%s", r.stdout)
	}
	cachesOnlyWhatDecides(t, syncs["member1"], ns, "member1")
	for _, c := range members {
		if after := objectUIDs(t, c, ns, "serve"); !slices.Equal(after, before[c]) {
			t.Errorf("%s: serve's import, derived Service and copies replaced in the move to the members' syncs: UIDs %v, were %v", c, after, before[c])
		}
	}
	for c, w := range syncs {
		for _, cl := range clustersWritten(t, w) {
			if cl != c {
				t.Errorf("sync --local=%s wrote in %s:\n%s", c, cl, w.out.String())
			}
		}
	}

	syncs["member2"].kill()
	now3 := scaledTo2(t, "member3", ns, "cart")
	waitFor(t, "member3's endpoint change in member1, member2's sync stopped", func() bool {
		return slices.Equal(importedIPs(t, "member1", ns, "cart", "member3"), now3)
	})
	if got := importedIPs(t, "member2", ns, "cart", "member3"); !slices.Equal(got, src3) {
		t.Errorf("member2 with its sync stopped: member3's copies %v, want them as they were (%v)", got, src3)
	}
	if got := importedIPs(t, "member2", ns, "cart", "member1"); !slices.Equal(got, src1) {
		t.Errorf("member2 with its sync stopped: member1's copies %v, want them as they were (%v)", got, src1)
	}

	startWatch(t, ns, "--local", "member2")
	waitFor(t, "member2 caught up once its sync is back", func() bool {
		return slices.Equal(importedIPs(t, "member2", ns, "cart", "member3"), now3)
	})
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("a clusterset-wide sync after member2's sync came back wrote:\n%s", r.stdout)
	}
}

// objectUIDs are the UIDs of the import of name, its derived Service and its copies in c.
func objectUIDs(t *testing.T, c, ns, name string) []string {
	t.Helper()
	var uids []string
	for _, ips := range slicesBySource(t, c, ns, name, func(s discoveryv1.EndpointSlice) []string { return []string{string(s.UID)} }) {
		uids = append(uids, ips...)
	}
	slices.Sort(uids)
	if si := get(t, c, siGVR("v1beta1"), ns, name); si != nil {
		uids = append(uids, "import:"+string(si.GetUID()))
	}
	if s := derivedService(t, c, ns, name); s != nil {
		uids = append(uids, "derived:"+string(s.UID))
	}
	if len(uids) < 3 {
		t.Fatalf("%s: the import, derived Service and copy of %s/%s not all there: %v", c, ns, name, uids)
	}
	return uids
}

// clustersWritten are the clusters of the writes a `sync --watch -o json` printed.
func clustersWritten(t *testing.T, w *watcher) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(w.out.String()))
	for sc.Scan() {
		var line struct {
			Cluster string `json:"cluster"`
			Kind    string `json:"kind"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Kind != "" {
			out = append(out, line.Cluster)
		}
	}
	if len(out) == 0 {
		t.Errorf("no write printed:\n%s", w.out.String())
	}
	return out
}

// TestSyncLocalWithAMemberDownAtStart: serve exported from member1 and member3, imported
// everywhere; member3's control plane stops, and member1's and member2's own syncs start only
// then. Member3 is never taken as not exporting: member2 keeps its copies of member3's endpoints
// while member1's endpoint change reaches it. Once member3 and its sync are back, a sync of the
// whole clusterset finds nothing to change.
func TestSyncLocalWithAMemberDownAtStart(t *testing.T) {
	ns := namespace(t, "e2e-localdown", members...)
	for _, c := range []string{"member1", "member3"} {
		deployment(t, c, ns, "serve", 1)
		service(t, c, ns, "serve")
		waitFor(t, c+"'s endpoint", func() bool { return len(sourceIPs(t, c, ns, "serve")) == 1 })
		userExport(t, c, ns, "serve")
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	src3 := sourceIPs(t, "member3", ns, "serve")
	if got := importedIPs(t, "member2", ns, "serve", "member3"); !slices.Equal(got, src3) {
		t.Fatalf("member2: member3's copies %v, want %v", got, src3)
	}

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	for _, c := range []string{"member1", "member2"} {
		startWatch(t, ns, "--local", c)
	}
	now1 := scaledTo2(t, "member1", ns, "serve")
	waitFor(t, "member1's endpoint change in member2, member3 down", func() bool {
		return slices.Equal(importedIPs(t, "member2", ns, "serve", "member1"), now1)
	})
	if got := importedIPs(t, "member2", ns, "serve", "member3"); !slices.Equal(got, src3) {
		t.Errorf("member2 with member3 down since its sync started: member3's copies %v, want them kept (%v)", got, src3)
	}

	testbed(t, "start", "member3")
	restarted = true
	startWatch(t, ns, "--local", "member3")
	waitFor(t, "member1's endpoint change in member3, back", func() bool {
		return slices.Equal(importedIPs(t, "member3", ns, "serve", "member1"), now1)
	})
	// Dry run: a sync that wrote would do member3's sync's work for it.
	waitFor(t, "a sync of the whole clusterset finds nothing to change", func() bool {
		return strings.HasPrefix(mcs("sync", "-n", ns, "--contexts", allMembers, "--dry-run=client").stdout, "No changes.")
	})
}

// scaledTo2 scales Deployment name of c to two pods and returns its Service's two ready endpoints.
func scaledTo2(t *testing.T, c, ns, name string) []string {
	t.Helper()
	if out, err := runKubectl(c, "-n", ns, "scale", "deployment", name, "--replicas=2"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitFor(t, c+"'s second endpoint of "+name, func() bool { return len(sourceIPs(t, c, ns, name)) == 2 })
	return sourceIPs(t, c, ns, name)
}

// cachesOnlyWhatDecides: a sync --local caches everything of the Services and EndpointSlices of
// its own member, and of every other member only those kubectl-mcs does not manage (the
// exporters' Services and source slices), so that the copies and derived Services the other
// syncs write cost it neither memory nor events.
func cachesOnlyWhatDecides(t *testing.T, w *watcher, ns, local string) {
	t.Helper()
	for _, c := range members {
		sel := names.NotManagedSelector
		if c == local {
			sel = ""
		}
		for kind, gvr := range map[string]schema.GroupVersionResource{"EndpointSlice": slicesGVR, "Service": {Version: "v1", Resource: "services"}} {
			var cached, want float64
			err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				v, _, err := promtext.Scrape("http://"+w.metrics+"/metrics", "kubectl_mcs_cached_objects", fmt.Sprintf("cluster=%q", c), fmt.Sprintf("kind=%q", kind))
				if err != nil {
					t.Fatal(err)
				}
				l, err := clients[c].dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					t.Fatal(err)
				}
				cached, want = v, float64(len(l.Items))
				return cached == want, nil
			})
			if err != nil {
				t.Errorf("sync --local=%s caches %v %ss of %s, want %v (selector %q)", local, cached, kind, c, want, sel)
			}
		}
	}
}
