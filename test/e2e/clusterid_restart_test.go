//go:build e2e

package e2e

// A member whose cluster ID changes while no sync runs: after the restart, what sync wrote under
// the former ID is recognised by the cluster's identity the imports record, and goes once the
// copies under the new ID are written.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// member3 exports serve under east (its ClusterProperty) to every member; sync stops; member3's
// ID changes; sync restarts. Every member then holds member3's endpoints under the new ID alone,
// and never none of them in between; a second sync finds nothing to change. Before, the copies
// under east stood for good as those of a cluster outside the clusterset, beside the new ones.
func TestFormerIDCopiesGoAfterARestart(t *testing.T) {
	toWest := func(t *testing.T) string {
		_, err := clients["member3"].dyn.Resource(cpGVR).Patch(context.Background(), "cluster.clusterset.k8s.io", types.MergePatchType,
			[]byte(`{"spec":{"value":"west"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("member3: patching its ClusterProperty: %v", err)
		}
		return "west"
	}
	deleted := func(t *testing.T) string {
		if err := clients["member3"].dyn.Resource(cpGVR).Delete(context.Background(), "cluster.clusterset.k8s.io", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("member3: deleting its ClusterProperty: %v", err)
		}
		return "member3" // its context name
	}
	t.Run("property changed, sync --watch restarted", func(t *testing.T) {
		restartUnderNewID(t, toWest, func(t *testing.T, ns string) {
			startWatch(t, ns)
		})
	})
	t.Run("property deleted, one-shot sync", func(t *testing.T) {
		restartUnderNewID(t, deleted, func(t *testing.T, ns string) {
			r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
			if strings.Contains(r.stdout+r.stderr, "not in the clusterset") {
				t.Errorf("sync held member3's former copies as outside the clusterset:\n%s%s", r.stdout, r.stderr)
			}
		})
	})
	t.Run("property changed, per-member syncs restarted", func(t *testing.T) {
		restartUnderNewID(t, toWest, func(t *testing.T, ns string) {
			for _, c := range members {
				startWatch(t, ns, "--local", c)
			}
		})
	})
}

// restartUnderNewID runs the scenario: change gives member3 its new ID (and returns it), restart
// starts sync again and returns when it has or once it runs.
func restartUnderNewID(t *testing.T, change func(*testing.T) string, restart func(t *testing.T, ns string)) {
	ns, want := exportedAsEast(t, "e2e-restartid")
	w := startWatch(t, ns)
	waitFor(t, "east's copies in every member", func() bool { return onlyFromIn(t, ns, "east", want, members...) == "" })
	w.kill()

	id := change(t)
	stop := neverNone(t, ns, "serve", want, members...)
	t.Cleanup(func() { stop() })
	restarted := time.Now()
	restart(t, ns)
	for why := onlyFromIn(t, ns, id, want, members...); why != ""; why = onlyFromIn(t, ns, id, want, members...) {
		if time.Since(restarted) > 60*time.Second {
			t.Fatalf("after sync restarted with member3's ID %s: %s", id, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("every member holds member3's endpoints under %s alone %s after the restart", id, time.Since(restarted).Round(time.Millisecond))
	if gaps := stop(); len(gaps) > 0 {
		t.Errorf("a member held none of member3's endpoints while they moved: %s", strings.Join(gaps, "; "))
	}
	if r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers); !strings.HasPrefix(r.stdout, "No changes.") {
		t.Errorf("a second sync:\n%s", r.stdout)
	}
}

// neverNone watches, until stop, the copies of ns/name in the given clusters: after every change
// each must hold every address of want under some source cluster. A watch sees every state the
// copies pass through, however short. stop returns what was missing, and when; it may be called
// again.
func neverNone(t *testing.T, ns, name string, want []string, in ...string) (stop func() []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		gaps []string
		wg   sync.WaitGroup
	)
	start := time.Now()
	sel := metav1.ListOptions{LabelSelector: "multicluster.kubernetes.io/service-name=" + name}
	for _, c := range in {
		api := clients[c].kube.DiscoveryV1().EndpointSlices(ns)
		l, err := api.List(ctx, sel)
		if err != nil {
			t.Fatalf("%s: listing the copies of %s/%s: %v", c, ns, name, err)
		}
		opts := sel
		opts.ResourceVersion = l.ResourceVersion
		w, err := api.Watch(ctx, opts)
		if err != nil {
			t.Fatalf("%s: watching the copies of %s/%s: %v", c, ns, name, err)
		}
		held := map[string][]string{} // copy -> its addresses
		for _, s := range l.Items {
			held[s.Name] = addresses(s)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				s, ok := ev.Object.(*discoveryv1.EndpointSlice)
				if !ok {
					continue
				}
				if ev.Type == watch.Deleted {
					delete(held, s.Name)
				} else {
					held[s.Name] = addresses(*s)
				}
				for _, ip := range want {
					if !slices.ContainsFunc(slices.Collect(maps.Values(held)), func(a []string) bool { return slices.Contains(a, ip) }) {
						mu.Lock()
						gaps = append(gaps, fmt.Sprintf("%s lacked %s at +%s (%s %s)", c, ip, time.Since(start).Round(time.Millisecond), ev.Type, s.Name))
						mu.Unlock()
					}
				}
			}
		}()
	}
	return func() []string {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return gaps
	}
}

// addresses are every endpoint address of a slice.
func addresses(s discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

// member3's ID changes from east to west while no sync runs, and member3 is down when sync
// starts again: its identity cannot be read, so nothing tells east from a cluster outside the
// clusterset, and the consumers keep east's copies, untouched, until member3 answers; it then
// joins as west, and east's copies go once west's are written.
func TestFormerIDKeptWhileTheMemberIsDown(t *testing.T) {
	ns, want := exportedAsEast(t, "e2e-downid")
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	consumers := []string{"member1", "member2"}
	if why := onlyFromIn(t, ns, "east", want, members...); why != "" {
		t.Fatalf("after a sync with member3's property saying east: %s", why)
	}
	if _, err := clients["member3"].dyn.Resource(cpGVR).Patch(context.Background(), "cluster.clusterset.k8s.io", types.MergePatchType,
		[]byte(`{"spec":{"value":"west"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("member3: patching its ClusterProperty: %v", err)
	}

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	stop := neverNone(t, ns, "serve", want, consumers...)
	t.Cleanup(func() { stop() })
	w := startWatch(t, ns)
	waitFor(t, "sync --watch to find member3 down", func() bool { return strings.Contains(w.out.String(), "member not read yet") })
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if why := onlyFromIn(t, ns, "east", want, consumers...); why != "" {
			t.Fatalf("member3 down, its identity unread: %s\nsync --watch:\n%s", why, w.out.String())
		}
	}
	testbed(t, "start", "member3")
	restarted = true
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		why := onlyFromIn(t, ns, "west", sourceIPs(t, "member3", ns, "serve"), members...)
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member3 back as west: %s\nsync --watch:\n%s", why, w.out.String())
		}
	}
	if gaps := stop(); len(gaps) > 0 {
		t.Errorf("a consumer held none of member3's endpoints: %s", strings.Join(gaps, "; "))
	}
}

// exportedAsEast makes a namespace in every member and exports serve (one pod) from member3,
// whose ClusterProperty says east; it returns the namespace and member3's endpoint address.
func exportedAsEast(t *testing.T, prefix string) (string, []string) {
	t.Helper()
	ns := namespace(t, prefix, members...)
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve")
	userExport(t, "member3", ns, "serve")
	clusterIDProperty(t, "member3", "east")
	waitFor(t, "member3's endpoint", func() bool { return len(sourceIPs(t, "member3", ns, "serve")) == 1 })
	return ns, sourceIPs(t, "member3", ns, "serve")
}
