//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// managedVersions maps every object sync manages in ns, in every member, to its resourceVersion.
func managedVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	kinds := []struct {
		gvr schema.GroupVersionResource
		sel string
	}{
		{siGVR("v1beta1"), "app.kubernetes.io/managed-by=kubectl-mcs"},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "app.kubernetes.io/managed-by=kubectl-mcs"},
		{schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, "endpointslice.kubernetes.io/managed-by=kubectl-mcs"},
		{seGVR("v1beta1"), ""}, // status conditions are ours too
	}
	for _, c := range members {
		for _, k := range kinds {
			l, err := clients[c].dyn.Resource(k.gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: k.sel})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range l.Items {
				out[fmt.Sprintf("%s/%s/%s", c, k.gvr.Resource, o.GetName())] = o.GetResourceVersion()
			}
		}
	}
	return out
}

// TestSyncWatchSteadyState: probes and metrics answer; once converged, an idle clusterset sees no
// write at all (counter and resourceVersions); SIGTERM ends the process cleanly, deleting nothing.
func TestSyncWatchSteadyState(t *testing.T) {
	ns := namespace(t, "e2e-idle", members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	w := startWatch(t, ns)
	waitFor(t, "/readyz", func() bool { return w.probe("/readyz") == http.StatusOK })
	if code := w.probe("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	userExport(t, "member1", ns, "serve")
	for _, c := range members {
		waitFor(t, c+": endpoints imported", func() bool { return len(importedIPs(t, c, ns, "serve", "member1")) == 2 })
	}
	waitFor(t, "export conditions", func() bool { return conditions(t, "member1", ns, "serve")["Ready"] == "True/Exported" })
	waitFor(t, "empty queue", func() bool { return w.metric(t, "kubectl_mcs_queue_depth") == 0 })
	time.Sleep(time.Second) // let trailing informer events settle
	writes, versions := w.metric(t, "kubectl_mcs_writes_total"), managedVersions(t, ns)
	if writes == 0 || len(versions) < 3*3 {
		t.Fatalf("nothing written? writes=%v objects=%d", writes, len(versions))
	}
	idle := 10 * time.Second
	time.Sleep(idle)
	if got := w.metric(t, "kubectl_mcs_writes_total"); got != writes {
		t.Errorf("%v writes during %v idle", got-writes, idle)
	}
	after := managedVersions(t, ns)
	for k, v := range versions {
		if after[k] != v {
			t.Errorf("%s changed while idle: resourceVersion %s -> %s", k, v, after[k])
		}
	}
	if n := w.metric(t, "kubectl_mcs_sync_duration_seconds_count"); n == 0 {
		t.Error("kubectl_mcs_sync_duration_seconds has no samples")
	}
	if n := w.metric(t, "kubectl_mcs_conflicts"); n != 0 {
		t.Errorf("kubectl_mcs_conflicts = %v", n)
	}
	if err := w.terminate(t); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	if got := importedIPs(t, "member2", ns, "serve", "member1"); len(got) != 2 {
		t.Errorf("endpoints gone after the controller stopped: %v", got)
	}
}

// TestSyncLeaderElection: of two replicas with --leader-elect only the Lease holder writes; both
// are ready (the standby as it sees the leader's Lease); when the leader is terminated the other
// takes over.
func TestSyncLeaderElection(t *testing.T) {
	ns := namespace(t, "e2e-leader", members...)
	leaderArgs := []string{"--leader-elect", "--leader-elect-context", "member2", "--leader-elect-namespace", ns}
	holder := func() string {
		l, err := clients["member2"].kube.CoordinationV1().Leases(ns).Get(context.Background(), "kubectl-mcs-sync", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	a := startWatch(t, ns, leaderArgs...)
	waitFor(t, "a Lease holder", func() bool { return holder() != "" && a.probe("/readyz") == http.StatusOK })
	first := holder()
	b := startWatch(t, ns, leaderArgs...)
	waitFor(t, "the standby's probes", func() bool { return b.probe("/healthz") == http.StatusOK })

	service(t, "member1", ns, "one")
	userExport(t, "member1", ns, "one")
	waitFor(t, "import of one in member3", func() bool { return get(t, "member3", siGVR("v1beta1"), ns, "one") != nil })
	// A standby is ready once it has seen the leader's Lease, so that a Deployment of two replicas
	// becomes available.
	waitFor(t, "the standby ready", func() bool { return b.probe("/readyz") == http.StatusOK })
	if n := b.metric(t, "kubectl_mcs_writes_total"); n != 0 {
		t.Errorf("the standby wrote %v times", n)
	}
	if holder() != first {
		t.Errorf("Lease moved from %q to %q with the leader alive", first, holder())
	}

	if err := a.terminate(t); err != nil {
		t.Errorf("leader exit after SIGTERM: %v", err)
	}
	waitFor(t, "the standby to take the Lease", func() bool { h := holder(); return h != "" && h != first })
	waitFor(t, "the new leader ready", func() bool { return b.probe("/readyz") == http.StatusOK })
	service(t, "member1", ns, "two")
	userExport(t, "member1", ns, "two")
	waitFor(t, "import of two in member3", func() bool { return get(t, "member3", siGVR("v1beta1"), ns, "two") != nil })
	if n := b.metric(t, "kubectl_mcs_writes_total"); n == 0 {
		t.Error("the new leader has no writes")
	}
}

// TestSyncLeaderLeaseClusterDown: the Lease cluster is the first of --contexts even when it is
// down at start. Two replicas started while it is down both stand by (no writes, not ready, the
// log names it) instead of electing one leader each elsewhere; once it is back exactly one leads
// and syncs, and no Lease ever appears in another cluster.
func TestSyncLeaderLeaseClusterDown(t *testing.T) {
	ns := namespace(t, "e2e-leader-down", members...)
	deployment(t, "member2", ns, "serve", 1)
	service(t, "member2", ns, "serve")
	userExport(t, "member2", ns, "serve")
	noLeaseElsewhere := func() {
		t.Helper()
		for _, c := range []string{"member2", "member3"} {
			if _, err := clients[c].kube.CoordinationV1().Leases(ns).Get(context.Background(), "kubectl-mcs-sync", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("%s: Lease %s/kubectl-mcs-sync: %v, want NotFound (the Lease cluster is member1)", c, ns, err)
			}
		}
	}

	testbed(t, "stop", "member1")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member1")
		}
	})
	leaderArgs := []string{"--leader-elect", "--leader-elect-namespace", ns} // Lease cluster: member1, the first of --contexts
	a := startWatch(t, ns, leaderArgs...)
	b := startWatch(t, ns, leaderArgs...)
	for _, w := range []*watcher{a, b} {
		waitFor(t, "the log to say the Lease cluster is unreachable", func() bool {
			out := w.out.String()
			return strings.Contains(out, "Lease cluster unreachable") && strings.Contains(out, `cluster="member1"`)
		})
	}
	time.Sleep(5 * time.Second) // a few election rounds
	for i, w := range []*watcher{a, b} {
		if code := w.probe("/healthz"); code != http.StatusOK {
			t.Errorf("replica %d /healthz: %d", i, code)
		}
		if code := w.probe("/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("replica %d /readyz with the Lease cluster down: %d, want 503", i, code)
		}
		if n := w.metric(t, "kubectl_mcs_writes_total"); n != 0 {
			t.Errorf("replica %d wrote %v times with the Lease cluster down", i, n)
		}
		select {
		case <-w.exited:
			t.Fatalf("replica %d exited: %v\n%s", i, w.exitErr, w.out.String())
		default:
		}
	}
	if get(t, "member3", siGVR("v1beta1"), ns, "serve") != nil {
		t.Error("a ServiceImport in member3 with nobody leading")
	}
	noLeaseElsewhere()

	testbed(t, "start", "member1")
	restarted = true
	waitFor(t, "a Lease holder in member1", func() bool { return leaseHolder(t, "member1", ns) != "" })
	first := leaseHolder(t, "member1", ns)
	// member1, down when the replicas started, joins late and imports too.
	for _, c := range members {
		waitFor(t, c+": endpoints imported", func() bool { return len(importedIPs(t, c, ns, "serve", "member2")) == 1 })
	}
	for i, w := range []*watcher{a, b} {
		waitFor(t, fmt.Sprintf("replica %d ready", i), func() bool { return w.probe("/readyz") == http.StatusOK })
	}
	wa, wb := a.metric(t, "kubectl_mcs_writes_total"), b.metric(t, "kubectl_mcs_writes_total")
	if (wa == 0) == (wb == 0) {
		t.Errorf("writes: replica 0 %v, replica 1 %v; want exactly one writer", wa, wb)
	}
	if h := leaseHolder(t, "member1", ns); h != first {
		t.Errorf("Lease moved from %q to %q with the leader alive", first, h)
	}
	noLeaseElsewhere()
}
