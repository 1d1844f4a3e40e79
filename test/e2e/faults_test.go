//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSyncRestartKeepsSlices: killing the controller and starting it again deletes nothing when
// the sources did not change.
func TestSyncRestartKeepsSlices(t *testing.T) {
	ns := namespace(t, "e2e-restart", members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	userExport(t, "member1", ns, "serve")
	w := startWatch(t, ns)
	waitFor(t, "import in member2", func() bool { return len(importedIPs(t, "member2", ns, "serve", "member1")) == 2 })
	before := managedSliceUIDs(t, "member2", ns)
	w.kill()
	startWatch(t, ns)
	time.Sleep(3 * time.Second)
	if after := managedSliceUIDs(t, "member2", ns); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("managed slices were deleted or replaced across a restart: %v -> %v", before, after)
	}
}

// TestSyncUnreachableMember: a member whose apiserver stops keeps its endpoints in the others
// until --unreachable-timeout, then they go; they come back with it.
func TestSyncUnreachableMember(t *testing.T) {
	ns := namespace(t, "e2e-outage", members...)
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve")
	userExport(t, "member3", ns, "serve")
	want := podIPs(t, "member3", ns, "serve")
	w := startWatch(t, ns, "--unreachable-timeout=4s")
	waitFor(t, "member3's endpoints in member1", func() bool { return len(importedIPs(t, "member1", ns, "serve", "member3")) == 1 })

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	stopped := time.Now()
	// One-shot sync meanwhile: it cannot read member3 at all, so it must delete nothing.
	r := mcs("sync", "-n", ns, "--contexts", allMembers)
	if r.code != 0 || !strings.Contains(r.stderr, `cluster "member3"`) {
		t.Errorf("one-shot sync with member3 down: exit %d, stderr %q", r.code, r.stderr)
	}
	// A command prints no klog info lines ("I1126 07:00:00.000000 ... member.go:175] ...")
	// unless -v asks for them.
	if klogLine.MatchString(r.stderr) {
		t.Errorf("one-shot sync printed klog lines:\n%s", r.stderr)
	}
	// The watch's stream says member3 went, in its own table.
	waitFor(t, "sync --watch to print member3 unreachable", func() bool { return memberRow.MatchString(w.out.String()) })
	time.Sleep(time.Until(stopped.Add(2 * time.Second)))
	if got := importedIPs(t, "member1", ns, "serve", "member3"); len(got) != 1 {
		t.Fatalf("member3's endpoints dropped %v after it went away, before --unreachable-timeout", time.Since(stopped))
	}
	waitFor(t, "eviction after --unreachable-timeout", func() bool { return len(importedIPs(t, "member1", ns, "serve", "member3")) == 0 })
	if d := time.Since(stopped); d < 4*time.Second {
		t.Errorf("evicted after %v, before the 4s timeout", d)
	}

	testbed(t, "start", "member3")
	restarted = true
	waitFor(t, "member3's endpoints restored", func() bool {
		got := importedIPs(t, "member1", ns, "serve", "member3")
		return len(got) == 1 && got[0] == want[0]
	})
	waitFor(t, "sync --watch to print member3 reachable", func() bool { return memberBackRow.MatchString(w.out.String()) })
}

var (
	klogLine      = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ `)
	memberRow     = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  member3 +Cluster +- +unreachable$`)
	memberBackRow = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  member3 +Cluster +- +reachable$`)
)

// A member back from an outage long enough for client-go's reflectors to back off to their cap
// (30 s, doubled by jitter) is read again at once, every kind: a namespace created there gets its
// import, and a service exported there reaches the others, within seconds.
func TestSyncMemberBackAfterALongOutage(t *testing.T) {
	ns := namespace(t, "e2e-back", "member1", "member2") // member3's comes after the outage
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	userExport(t, "member1", ns, "serve")
	w := startWatch(t, ns, "--unreachable-timeout=4s")
	waitFor(t, "serve imported in member2", func() bool { return len(importedIPs(t, "member2", ns, "serve", "member1")) == 1 })

	testbed(t, "stop", "member3")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			testbed(t, "start", "member3")
		}
	})
	waitFor(t, "sync --watch to print member3 unreachable", func() bool { return memberRow.MatchString(w.out.String()) })
	time.Sleep(40 * time.Second)
	testbed(t, "start", "member3")
	restarted = true

	within := func(what string, d time.Duration, done func() bool) {
		t.Helper()
		start := time.Now()
		if wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, d, true, func(context.Context) (bool, error) { return done(), nil }) != nil {
			t.Fatalf("%s: not within %s (reflectors left to their backoff?)", what, d)
		}
		t.Logf("%s after %.1f s", what, time.Since(start).Seconds())
	}
	_, err := clients["member3"].kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("member3: creating namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = clients["member3"].kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	within("serve imported in member3's new namespace", 10*time.Second, func() bool { return len(importedIPs(t, "member3", ns, "serve", "member1")) == 1 })
	deployment(t, "member3", ns, "serve", 1)
	service(t, "member3", ns, "serve")
	waitFor(t, "serve's endpoint in member3", func() bool { return len(sourceIPs(t, "member3", ns, "serve")) == 1 })
	userExport(t, "member3", ns, "serve")
	within("member3's new export imported in member2", 10*time.Second, func() bool { return len(importedIPs(t, "member2", ns, "serve", "member3")) == 1 })
}
