//go:build traffic

package traffic

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
)

// Sync's Lease (pkg/sync/process): a standby reads it every retryPeriod, stretched by up to
// client-go's JitterFactor, and counts leaseDuration from the read that first saw the last renewal.
// A leader gone without releasing it is replaced up to leaseDuration and two such reads after it
// last renewed; the new leader then needs one sync round to carry a change.
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
	syncRound     = 5 * time.Second
	standbyRead   = time.Duration(float64(retryPeriod) * (1 + leaderelection.JitterFactor))
	takeover      = leaseDuration + 2*standbyRead + syncRound
)

func requireProduction(t *testing.T) {
	t.Helper()
	if !production {
		t.Skip("the production path only (make test-production): sync and the DNS server as pods")
	}
}

// The leader sync pod is deleted at once (grace 0), in the host (per member: in the consumer,
// whose sync alone carries changes there): the standby takes the Lease, and an endpoint change made
// right after reaches every member within the takeover bound (above). A pod calling the service
// meanwhile sees no failed request, and nothing sync wrote is replaced.
func TestProductionLeaderTakeover(t *testing.T) {
	requireProduction(t)
	ns, name := served(t, "takeover", "member1")
	uids := managedUIDs(t, ns)
	before := readyAddresses(t, "member1", ns, "kubernetes.io/service-name=serve")

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	at := host
	if perMember {
		at = consumer
	}
	leader := leaderPod(t, at)
	must(t, kubectl(nil, at, "-n", systemNS, "delete", "pod", leader, "--grace-period=0", "--force"), "delete the leader "+leader)
	killed := time.Now()
	must(t, kubectl(nil, "member1", "-n", ns, "scale", "deployment/serve", "--replicas=2"), "scale serve")
	changed, copied := propagation(t, ns, before)
	t.Logf("takeover: change -> last copy %.1f s (kill -> change %.1f s, kill -> last copy %.1f s)",
		copied.Sub(changed).Seconds(), changed.Sub(killed).Seconds(), copied.Sub(killed).Seconds())
	if d := copied.Sub(changed); d > takeover {
		t.Fatalf("the change reached every member %s after it was made, more than the Lease duration, two of the standby's reads and a round (%s)", d, takeover)
	}
	if now := leaderPod(t, at); now == leader {
		t.Fatalf("the Lease is still held by the deleted pod %s", leader)
	}
	requests.expectNoFailure(t)
	unchanged(t, uids, managedUIDs(t, ns))
}

// The consumer's DNS server pods are deleted one after another while a pod looks up, through
// CoreDNS, a name CoreDNS may cache and one it may not (NXDOMAIN is not cached): not one of 1,000
// lookups fails. The DNS server does not depend on how sync runs: one of the two mode runs is
// enough, and the host run does it.
func TestProductionDNSServerPodDeleted(t *testing.T) {
	requireProduction(t)
	if perMember {
		t.Skip("the DNS server runs alike in both modes: checked in the host mode run")
	}
	ns, name := served(t, "dnspod", "member1")

	const lookups = 1000 // two per run
	loop := loopRuns(t, ns, "lookups", fmt.Sprintf(
		// A failed lookup prints what dig said (its status line, or that it timed out).
		`look() { r=$(dig +time=2 +tries=1 "$1" A 2>&1); echo "$r" | grep -q "status: $2" || { echo "$1: $(echo "$r" | grep -E 'status:|timed out|connection' | head -2)"; false; }; }; `+
			`look %s NOERROR && look nosuch-$n.%s.svc.clusterset.local NXDOMAIN`, name, ns), lookups/2)
	deleted := 0
	for !loop.ended() {
		var pods []string // not terminating
		for _, l := range strings.Split(must(t, kubectl(nil, consumer, "-n", systemNS, "get", "pods", "-l", "app.kubernetes.io/name="+dnsName, "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`), "DNS server pods").stdout, "\n") {
			if f := strings.Fields(l); len(f) == 1 {
				pods = append(pods, f[0])
			}
		}
		if len(pods) < 2 {
			t.Fatalf("%s runs %d DNS server pods, want 2", consumer, len(pods))
		}
		time.Sleep(3 * time.Second)
		// Not waited for: the pod drains for --shutdown-delay while its replacement starts.
		pod := pods[deleted%len(pods)]
		must(t, kubectl(nil, consumer, "-n", systemNS, "delete", "pod", pod, "--wait=false"), "delete DNS server pod")
		t.Logf("%s deleted at %s", pod, time.Now().Format("15:04:05.000"))
		deleted++
		must(t, kubectl(nil, consumer, "-n", systemNS, "rollout", "status", "deployment/"+dnsName, "--timeout=90s"), "DNS server rollout")
	}
	t.Logf("%d DNS server pods deleted during %d lookups", deleted, lookups)
	if deleted < 3 {
		t.Fatalf("only %d DNS server pods deleted while the lookups ran, want at least 3", deleted)
	}
	loop.expectNoFailure(t)
}

// sync is rolled to a rebuilt image (another version string) the way it was installed: no
// request fails, the new replicas carry changes, and no object sync wrote is deleted and recreated.
func TestProductionRollingUpgrade(t *testing.T) {
	requireProduction(t)
	if nextImage == "" {
		t.Skip("TRAFFIC_NEXT_IMAGE is not set: no second image to roll to")
	}
	ns, name := served(t, "roll", "member1", "member3")
	uids := managedUIDs(t, ns)
	before := readyAddresses(t, "member1", ns, "kubernetes.io/service-name=serve")

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	must(t, install(nextImage, perMember), "kubectl mcs install --image "+nextImage) // waits for the rollout and the leaders
	for _, c := range syncMembers() {
		eventually(t, 90*time.Second, c+": the old sync pods gone, two of "+nextImage+" left", func() (bool, string) {
			images := strings.Fields(must(t, kubectl(nil, c, "-n", systemNS, "get", "pods", "-l", "app.kubernetes.io/name="+syncName,
				"-o", "jsonpath={.items[*].spec.containers[0].image}"), "sync pods").stdout)
			return len(images) == 2 && images[0] == nextImage && images[1] == nextImage, fmt.Sprint(images)
		})
	}
	must(t, kubectl(nil, "member1", "-n", ns, "scale", "deployment/serve", "--replicas=2"), "scale serve")
	propagation(t, ns, before)
	requests.expectNoFailure(t)
	unchanged(t, uids, managedUIDs(t, ns))
}

// served runs serve (one echo pod) in each of the clusters from, exports it, starts the client
// pod and waits until requests to the clusterset name are answered by every one of them; it
// returns the namespace and that name.
func served(t *testing.T, prefix string, from ...string) (ns, name string) {
	t.Helper()
	ns = namespace(t, prefix)
	for _, c := range from {
		echo(t, c, ns, "serve", 1, http80, false)
	}
	client(t, ns)
	expose(t, ns, "serve", members...)
	name = clustersetName("serve", ns)
	eventually(t, 90*time.Second, fmt.Sprint("requests from ", consumer, " to ", name, " answered by ", from), func() (bool, string) {
		a := answeredBy(5*len(from), func() (string, bool) { return get(ns, name, 80) })
		for _, c := range from {
			if a.seen[c] == 0 {
				return false, a.String()
			}
		}
		return a.seen[""] == 0, a.String()
	})
	return ns, name
}

// leaderPod is the sync pod holding the Lease in member c.
func leaderPod(t *testing.T, c string) string {
	t.Helper()
	var pod string
	eventually(t, 60*time.Second, c+": a sync pod holds the Lease", func() (bool, string) {
		l, err := clients[c].CoordinationV1().Leases(systemNS).Get(context.Background(), leaseName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return false, fmt.Sprint(err)
		}
		pod, _, _ = strings.Cut(*l.Spec.HolderIdentity, "_")
		return true, ""
	})
	return pod
}

// readyAddresses are the ready endpoint addresses of the slices selected in cluster c.
func readyAddresses(t *testing.T, c, ns, selector string) map[string]bool {
	t.Helper()
	slices, err := clients[c].DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("%s: endpoint slices %s: %v", c, selector, err)
	}
	addrs := map[string]bool{}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				for _, a := range e.Addresses {
					addrs[a] = true
				}
			}
		}
	}
	return addrs
}

// propagation waits for a ready endpoint of serve in member1 that was not in before, and then for
// it in the copies of every other member; it returns when each was first seen.
func propagation(t *testing.T, ns string, before map[string]bool) (changed, copied time.Time) {
	t.Helper()
	var to []string
	for _, c := range members {
		if c != "member1" {
			to = append(to, c)
		}
	}
	return propagationFrom(t, ns, "member1", before, to...)
}

// propagationFrom waits for a ready endpoint of serve in src that was not in before, and then
// for it in the copies of each member of to; it returns when each was first seen.
func propagationFrom(t *testing.T, ns, src string, before map[string]bool, to ...string) (changed, copied time.Time) {
	t.Helper()
	var added string
	deadline := time.Now().Add(2 * time.Minute)
	for added == "" {
		for a := range readyAddresses(t, src, ns, "kubernetes.io/service-name=serve") {
			if !before[a] {
				added, changed = a, time.Now()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new ready endpoint of serve in %s within 2m", src)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range to {
		for !readyAddresses(t, c, ns, "multicluster.kubernetes.io/service-name=serve")[added] {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the copies of serve never got %s's new endpoint %s", c, src, added)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return changed, time.Now()
}

// managedUIDs are the UIDs of every object sync wrote in ns, in every member.
func managedUIDs(t *testing.T, ns string) map[string]string {
	t.Helper()
	uids := map[string]string{}
	for _, c := range members {
		for kinds, label := range map[string]string{
			"serviceimports,services": "app.kubernetes.io/managed-by=kubectl-mcs",
			"endpointslices":          "endpointslice.kubernetes.io/managed-by=kubectl-mcs",
		} {
			r := must(t, kubectl(nil, c, "-n", ns, "get", kinds, "-l", label, "-o",
				`jsonpath={range .items[*]}{.kind}/{.metadata.name} {.metadata.uid}{"\n"}{end}`), "objects of sync in "+c)
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if k, uid, ok := strings.Cut(l, " "); ok {
					uids[c+" "+k] = uid
				}
			}
		}
	}
	if len(uids) == 0 {
		t.Fatalf("no object of sync in %s", ns)
	}
	return uids
}

// unchanged fails when an object of before is gone or has another UID (deleted and recreated).
func unchanged(t *testing.T, before, after map[string]string) {
	t.Helper()
	var lost []string
	for k, uid := range before {
		if after[k] != uid {
			lost = append(lost, fmt.Sprintf("%s: uid %s, now %q", k, uid, after[k]))
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		t.Fatalf("objects sync wrote were deleted or replaced:\n%s", strings.Join(lost, "\n"))
	}
}

// running is a shell loop in the client pod: it runs a command every 0.2 s until stopped, and
// counts the runs and the failures ($n is the run's number, for names that must not be cached).
type running struct {
	ns, name string
	started  time.Time
	done     chan result
	finished chan struct{} // closed when the loop has ended, by itself or stopped
}

// ended says whether the loop has ended by itself (loopRuns' number of runs reached).
func (r *running) ended() bool {
	select {
	case <-r.finished:
		return true
	default:
		return false
	}
}

// minLoop is how long a loop runs at least, so that a fault over quickly still meets enough runs.
const minLoop = 8 * time.Second

func loop(t *testing.T, ns, name, command string) *running {
	t.Helper()
	return loopRuns(t, ns, name, command, 0)
}

// loopRuns is loop ending by itself after runs runs, one right after the other (0: only when
// stopped, a run every 0.2 s).
func loopRuns(t *testing.T, ns, name, command string, runs int) *running {
	t.Helper()
	script := fmt.Sprintf(`n=0; f=0; rm -f /tmp/stop-%[1]s
while [ ! -e /tmp/stop-%[1]s ] && { [ %[3]d -eq 0 ] || [ $n -lt %[3]d ]; }; do
  if ! out=$( { %[2]s ; } 2>&1); then f=$((f+1)); echo "run $n failed at $(date +%%T.%%N): $out" >&2; fi
  n=$((n+1)); [ %[3]d -gt 0 ] || sleep 0.2
done
echo "$n $f"`, name, command, runs)
	r := &running{ns: ns, name: name, started: time.Now(), done: make(chan result, 1), finished: make(chan struct{})}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "--context", consumer, "-n", ns,
			"exec", "client", "--", "sh", "-c", script)
		cmd.Env = os.Environ()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if err != nil {
			code = 1
		}
		r.done <- result{out.String(), errb.String(), code}
		close(r.finished)
	}()
	return r
}

// expectNoFailure stops the loop and fails the test if any run failed (or the loop did not run).
func (r *running) expectNoFailure(t *testing.T) {
	t.Helper()
	time.Sleep(time.Until(r.started.Add(minLoop)))
	must(t, kubectl(nil, consumer, "-n", r.ns, "exec", "client", "--", "touch", "/tmp/stop-"+r.name), "stop the "+r.name+" loop")
	res := <-r.done
	var runs, failed int
	if _, err := fmt.Sscan(strings.TrimSpace(res.stdout), &runs, &failed); err != nil || res.code != 0 {
		t.Fatalf("the %s loop: exit %d: %s%s", r.name, res.code, res.stdout, res.stderr)
	}
	t.Logf("%s: %d runs, %d failed", r.name, runs, failed)
	if runs < 10 || failed > 0 {
		t.Fatalf("%s: %d of %d failed (want none of at least 10):\n%s", r.name, failed, runs, tail(res.stderr, 20))
	}
}

// member3 stops, its control plane and its node (kubelet and containerd paused, as a hung
// machine; its pods go on answering), while sync runs in member1: requests from member2 never
// fail, member3's copies stay for the deployed --unreachable-timeout and go after it, and come
// back once member3 answers again.
func TestProductionMemberStopped(t *testing.T) {
	requireProduction(t)
	const stopped = "member3"
	ns, name := served(t, "stopped", "member1", stopped)
	request := func() (string, bool) { return get(ns, name, 80) }
	copies := "multicluster.kubernetes.io/service-name=serve,multicluster.kubernetes.io/source-cluster=" + stopped

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	stopMember(t, stopped)
	down := time.Now()
	time.Sleep(unreachableTimeout / 2)
	if len(readyAddresses(t, consumer, ns, copies)) == 0 {
		t.Fatalf("%s's copies left %s %s after it stopped, before --unreachable-timeout (%s)", stopped, consumer, time.Since(down), unreachableTimeout)
	}
	eventually(t, unreachableTimeout+60*time.Second, stopped+"'s copies dropped from "+consumer+" after --unreachable-timeout", func() (bool, string) {
		a := readyAddresses(t, consumer, ns, copies)
		return len(a) == 0, fmt.Sprint(a)
	})
	if d := time.Since(down); d < unreachableTimeout {
		t.Fatalf("%s's copies dropped %s after it stopped, before --unreachable-timeout (%s)", stopped, d, unreachableTimeout)
	}
	t.Logf("%s's copies dropped %.1f s after it stopped (--unreachable-timeout %s)", stopped, time.Since(down).Seconds(), unreachableTimeout)
	if a := answeredBy(10, request); a.seen["member1"] != 10 {
		t.Fatalf("with %s dropped, answers %s, want all from member1", stopped, a)
	}
	startMember(t, stopped)
	eventually(t, 2*time.Minute, stopped+"'s copies back in "+consumer, func() (bool, string) {
		return len(readyAddresses(t, consumer, ns, copies)) > 0, "none"
	})
	requests.expectNoFailure(t)
}

// stopMember stops a member's control plane and pauses its node's kubelet and containerd; the
// member is started again when the test ends, whatever happens.
func stopMember(t *testing.T, c string) {
	t.Helper()
	signalNode(t, c, syscall.SIGSTOP)
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			signalNode(t, c, syscall.SIGCONT)
			run(nil, "bash", testbedScript("testbed.sh"), "start", c)
		}
	})
	must(t, run(nil, "bash", testbedScript("testbed.sh"), "stop", c), "stop "+c)
	startMember = func(t *testing.T, c string) {
		t.Helper()
		resumed = true
		signalNode(t, c, syscall.SIGCONT)
		must(t, run(nil, "bash", testbedScript("testbed.sh"), "start", c), "start "+c)
	}
}

// startMember undoes the last stopMember.
var startMember func(t *testing.T, c string)

// signalNode signals the kubelet and containerd of c's node, by the PIDs the bed recorded.
func signalNode(t *testing.T, c string, sig syscall.Signal) {
	t.Helper()
	for _, p := range []string{"kubelet", "containerd"} {
		b, err := os.ReadFile(filepath.Join(testbedDir, "nodes", c, "pids", p))
		if err != nil {
			t.Fatalf("%s: the %s PID: %v", c, p, err)
		}
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err != nil || syscall.Kill(pid, sig) != nil {
			t.Fatalf("%s: signal %v to %s (%q): %v", c, sig, p, b, err)
		}
	}
}
