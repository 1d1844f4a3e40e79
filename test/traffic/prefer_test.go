//go:build traffic

package traffic

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// otherClusterZone is the hint sync gives the other clusters' endpoints (engine.OtherClusterZone).
const otherClusterZone = "kubectl-mcs-other-cluster"

// PreferSameCluster with real kube-proxies: serve runs in member1 and member2, and member2 prefers
// its own endpoints. Its pods are answered by member2 alone while member3's reach both clusters;
// with member2's serve scaled to 0 they are answered by member1, and by member2 alone again once
// it is back. The failover is timed against a plain local Service's in the same event: local, in
// member2, over serve's pods and one spare pod, whose kube-proxy drops serve's pods too; the one
// difference is sync's copy on the way.
func TestPreferSameCluster(t *testing.T) {
	// home is the consumer: clusterIP reads derived-serve there.
	home, away, elsewhere := consumer, "member1", "member3"
	ns := namespace(t, "prefer")
	for _, c := range []string{away, home} {
		echo(t, c, ns, "serve", 2, http80, false)
	}
	echo(t, home, ns, "spare", 1, http80, false)
	must(t, kubectl([]byte(fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: local, namespace: %s}
spec:
  selector: {role: echo}
  ports: [{name: http, port: 80, targetPort: 80}]
`, ns)), home, "apply", "-f", "-"), "Service local in "+home)
	clientIn(t, home, ns)
	clientIn(t, elsewhere, ns)
	expose(t, ns, "serve", members...)
	must(t, mcs("expose", "serve", "-n", ns, "--contexts", strings.Join(members, ","), "--providers="+home,
		"--traffic-distribution=PreferSameCluster"), "expose serve --traffic-distribution=PreferSameCluster")

	zone := nodeZone(t, home)
	eventually(t, 60*time.Second, home+"'s copies hinted: its endpoints "+zone+", "+away+"'s "+otherClusterZone, func() (bool, string) {
		h := hints(t, home, ns, "serve")
		ok := slices.Equal(h[home], []string{zone, zone}) && slices.Equal(h[away], []string{otherClusterZone, otherClusterZone})
		return ok, fmt.Sprint(h)
	})
	// The members without the choice: no hints, their kube-proxies use every endpoint.
	for _, c := range []string{away, elsewhere} {
		eventually(t, 60*time.Second, c+"'s copies without hints", func() (bool, string) {
			h := hints(t, c, ns, "serve")
			return slices.Equal(h[home], []string{"-", "-"}) && slices.Equal(h[away], []string{"-", "-"}), fmt.Sprint(h)
		})
	}
	url := "http://" + clustersetName("serve", ns) + "/"
	eventually(t, 60*time.Second, "50 requests from "+home+" answered by "+home+" alone", func() (bool, string) {
		a := burst(home, ns, url, 50)
		return a.seen[home] == 50, a.String()
	})
	eventually(t, 60*time.Second, "requests from "+elsewhere+" answered by both clusters", func() (bool, string) {
		a := burst(elsewhere, ns, url, 50)
		return a.seen[home] > 0 && a.seen[away] > 0 && a.seen[""] == 0, a.String()
	})

	// By IP: the failover is kube-proxy's, the clusterset name's answer does not change.
	far := startProbe(t, home, ns, "far", "http://"+clusterIP(t, ns, "serve")+"/")
	near := startProbe(t, home, ns, "near", "http://"+serviceIP(t, home, ns, "local")+"/")
	isSpare := func(s sample) bool { return strings.HasPrefix(s.pod, "spare-") }
	eventually(t, 60*time.Second, "the local Service answering by serve's pods and the spare", func() (bool, string) {
		s := near.since(time.Time{})
		return slices.ContainsFunc(s, isSpare) && slices.ContainsFunc(s, func(s sample) bool { return strings.HasPrefix(s.pod, "serve-") }), fmt.Sprint(len(s), " samples")
	})
	time.Sleep(2 * time.Second)

	down := scaleNow(t, home, ns, "serve", 0)
	// Where the time goes: member2's own slice of serve, then sync's copy of it, without a ready
	// endpoint.
	gone := noneReady(t, home, ns, "kubernetes.io/service-name=serve",
		"multicluster.kubernetes.io/service-name=serve,multicluster.kubernetes.io/source-cluster="+home)
	eventually(t, 30*time.Second, "the clusterset IP answered by "+away+" and the local Service by the spare alone", func() (bool, string) {
		f, n := failover(far.since(down), ofCluster(away)), failover(near.since(down), isSpare)
		return f.first != nil && n.settled != nil && time.Since(n.settled.at) > 3*time.Second && time.Since(f.first.at) > 3*time.Second,
			fmt.Sprintf("clusterset %v; local %v", f, n)
	})
	before := far.before(down)
	if a := countBy(before); a.seen[home] != len(before) || len(before) < 20 {
		t.Fatalf("before the scale-down, the clusterset IP from %s was answered %s, want all of at least 20 by %s", home, a, home)
	}
	if n := failover(near.before(down), func(sample) bool { return true }); n.after > 0 {
		t.Fatalf("before the scale-down, %d requests to the local Service failed after its first answer", n.after)
	}
	f, n := failover(far.since(down), ofCluster(away)), failover(near.since(down), isSpare)
	if n.settled == nil {
		t.Fatalf("after the scale-down, the local Service's last request was not answered by the spare: %v", n)
	}
	if f.after != 0 {
		t.Errorf("after %s's first answer, %d requests to the clusterset IP failed or were answered by another cluster: %v", away, f.after, f)
	}
	line := fmt.Sprintf("failover: %d ms from the scale-down to %s's first answered request (%s's slice without a ready endpoint at %d ms, "+
		"its copy at %d ms), %d requests failed (a request every %s); local Service: %d ms to the spare alone, %d failed",
		f.first.start.Sub(down).Milliseconds(), away, home, gone[0].Sub(down).Milliseconds(), gone[1].Sub(down).Milliseconds(),
		f.failed, probeInterval, n.settled.start.Sub(down).Milliseconds(), n.failed)
	t.Log(line)
	fmt.Println(line)

	up := scaleNow(t, home, ns, "serve", 2)
	rollout(t, home, ns, "deployment/serve")
	eventually(t, 60*time.Second, "the clusterset IP answered by "+home+" again", func() (bool, string) {
		b := failover(far.since(up), ofCluster(home))
		return b.first != nil && time.Since(b.first.at) > 3*time.Second, b.String()
	})
	back := failover(far.since(up), ofCluster(home))
	if a := countBy(far.since(up)); a.seen[""] > 0 || back.after > 0 {
		t.Errorf("scaled back: %s; %d requests failed or answered by another cluster after %s's first answer", a, back.after, home)
	}
	t.Logf("failback: %d ms from the scale-up to %s's first answer", back.first.start.Sub(up).Milliseconds(), home)
	far.stop(t)
	near.stop(t)
	if a := burst(home, ns, url, 50); a.seen[home] != 50 {
		t.Fatalf("scaled back: 50 requests from %s answered %s, want all by %s", home, a, home)
	}
}

// nodeZone is the zone label of cluster c's node (test/testbed/node.sh sets it).
func nodeZone(t *testing.T, c string) string {
	t.Helper()
	n, err := clients[c].CoreV1().Nodes().Get(context.Background(), c+"-node", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: node: %v", c, err)
	}
	z := n.Labels[corev1.LabelTopologyZone]
	if z == "" {
		t.Fatalf("%s: node %s has no %s label (node.sh gives each real node one)", c, n.Name, corev1.LabelTopologyZone)
	}
	return z
}

// hints are the zone hints of every endpoint of c's copies of name, by source cluster ("-": none).
func hints(t *testing.T, c, ns, name string) map[string][]string {
	t.Helper()
	l, err := clients[c].DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "multicluster.kubernetes.io/service-name=" + name})
	if err != nil {
		t.Fatalf("%s: copies of %s: %v", c, name, err)
	}
	out := map[string][]string{}
	for _, s := range l.Items {
		src := s.Labels["multicluster.kubernetes.io/source-cluster"]
		for _, e := range s.Endpoints {
			h := "-"
			if e.Hints != nil {
				var z []string
				for _, f := range e.Hints.ForZones {
					z = append(z, f.Name)
				}
				h = strings.Join(z, "+")
			}
			out[src] = append(out[src], h)
		}
	}
	return out
}

func serviceIP(t *testing.T, c, ns, name string) string {
	t.Helper()
	s, err := clients[c].CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || s.Spec.ClusterIP == "" {
		t.Fatalf("%s: Service %s: %v", c, name, err)
	}
	return s.Spec.ClusterIP
}

// scaleNow sets a Deployment's replicas and returns when the apiserver took it.
func scaleNow(t *testing.T, c, ns, name string, replicas int) time.Time {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := clients[c].AppsV1().Deployments(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("%s: scale %s to %d: %v", c, name, replicas, err)
	}
	return time.Now()
}

// noneReady polls the EndpointSlices of c each selector selects until they have no ready endpoint,
// and returns when each was first seen so.
func noneReady(t *testing.T, c, ns string, selectors ...string) []time.Time {
	t.Helper()
	at := make([]time.Time, len(selectors))
	deadline := time.Now().Add(30 * time.Second)
	for left := len(selectors); left > 0; time.Sleep(20 * time.Millisecond) {
		for i, sel := range selectors {
			if at[i].IsZero() && len(readyAddresses(t, c, ns, sel)) == 0 {
				at[i], left = time.Now(), left-1
			}
		}
		if left > 0 && time.Now().After(deadline) {
			t.Fatalf("%s: the slices %q still have ready endpoints 30 s after the scale-down", c, selectors)
		}
	}
	return at
}

// burst makes n requests to url one after the other from the client pod of c, in one exec, and
// counts the answers by cluster.
func burst(c, ns, url string, n int) answers {
	r := inClientOf(c, ns, "sh", "-c", fmt.Sprintf(
		`for i in $(seq %d); do if out=$(curl -sS --max-time 2 %s 2>&1); then echo "$out"; else echo "failed: $out" | tr '\n' ' '; echo; fi; done`, n, url))
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != n {
		return answers{seen: map[string]int{"": n}, failed: []string{fmt.Sprintf("exec: exit %d: %s", r.code, tail(r.stdout+r.stderr, 5))}}
	}
	return answeredBy(n, func() (string, bool) {
		l := lines[0]
		lines = lines[1:]
		return l, !strings.HasPrefix(l, "failed: ")
	})
}

// probeInterval is how often a probe requests; its timeout is ten times that (test/images/echo).
const probeInterval = 50 * time.Millisecond

// sample is one probe request: when it started and ended, and who answered (cluster "" when it
// failed). The probe stamps the end; a request starts at the first tick after the one before it
// ended, so its start is taken as that end, at most probeInterval early. A request is routed when
// it starts: a failed one may end its timeout later.
type sample struct {
	start, at    time.Time
	pod, cluster string
}

// probe is `echo -probe` in a client pod: a request on a new connection every probeInterval, so
// that kube-proxy chooses again each time, one after the other, each line stamped by the pod
// (pods share the host's clock).
type probe struct {
	c, ns, name string
	mu          sync.Mutex
	samples     []sample
	done        chan error
	stopped     bool
}

func startProbe(t *testing.T, c, ns, name, url string) *probe {
	t.Helper()
	p := &probe{c: c, ns: ns, name: name, done: make(chan error, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "--context", c, "-n", ns, "exec", "client", "--", "sh", "-c",
		fmt.Sprintf(`rm -f /tmp/stop-%[1]s; mcs-echo -probe %[2]s -interval %[3]s & p=$!
while [ ! -e /tmp/stop-%[1]s ]; do sleep 0.2; done; kill $p`, name, url, probeInterval))
	cmd.Env = os.Environ()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("probe %s in %s: %v", name, c, err)
	}
	t.Cleanup(func() { p.stop(t); cancel() })
	go func() {
		sc := bufio.NewScanner(out)
		var prev time.Time
		for sc.Scan() {
			f := strings.Fields(sc.Text()) // "NANOS POD CLUSTER tcp 80" or "NANOS -"
			if len(f) != 2 && len(f) != 5 {
				continue
			}
			nanos, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			s := sample{start: prev, at: time.Unix(0, nanos)}
			if prev.IsZero() {
				s.start = s.at.Add(-probeInterval)
			}
			prev = s.at
			if len(f) == 5 {
				s.pod, s.cluster = f[1], f[2]
			}
			p.mu.Lock()
			p.samples = append(p.samples, s)
			p.mu.Unlock()
		}
		p.done <- cmd.Wait()
	}()
	return p
}

// stop ends the probe (once; later calls do nothing).
func (p *probe) stop(t *testing.T) {
	t.Helper()
	if p.stopped {
		return
	}
	p.stopped = true
	kubectl(nil, p.c, "-n", p.ns, "exec", "client", "--", "touch", "/tmp/stop-"+p.name)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("probe %s in %s did not stop", p.name, p.c)
	}
}

// since is every sample that ended at t or later.
func (p *probe) since(t time.Time) []sample { return p.between(t, time.Time{}) }

// before is every sample that ended before t.
func (p *probe) before(t time.Time) []sample { return p.between(time.Time{}, t) }

// between is the samples that ended in [from, to) (to zero: no end).
func (p *probe) between(from, to time.Time) []sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sample
	for _, s := range p.samples {
		if !s.at.Before(from) && (to.IsZero() || s.at.Before(to)) {
			out = append(out, s)
		}
	}
	return out
}

func ofCluster(c string) func(sample) bool { return func(s sample) bool { return s.cluster == c } }

func countBy(samples []sample) answers {
	return answeredBy(len(samples), func() (string, bool) {
		s := samples[0]
		samples = samples[1:]
		return s.pod + " " + s.cluster + " tcp 80", s.cluster != ""
	})
}

// moved is how requests moved to the survivors after a change: the first answer by one, the first
// request from which on every one was answered by one (settled), the requests that failed, and
// the requests after the first survivor's answer not answered by one (failed or by another).
type moved struct {
	first, settled *sample
	failed, after  int
}

// failover reads samples, in order from a change on, for the move to the survivors.
func failover(samples []sample, survivor func(sample) bool) moved {
	var m moved
	for i := range samples {
		s := &samples[i]
		ok := s.cluster != "" && survivor(*s)
		switch {
		case ok && m.first == nil:
			m.first = s
		case !ok && m.first != nil:
			m.after++
		}
		if !ok {
			m.settled = nil
			if s.cluster == "" {
				m.failed++
			}
		} else if m.settled == nil {
			m.settled = s
		}
	}
	return m
}

func (m moved) String() string {
	at := func(s *sample) string {
		if s == nil {
			return "none"
		}
		return s.start.Format("15:04:05.000") + " " + s.pod
	}
	return fmt.Sprintf("first survivor's answer %s, settled %s, %d failed, %d after the first not by a survivor", at(m.first), at(m.settled), m.failed, m.after)
}
