//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
)

// campaignConfig is one fault campaign: how often `sync --watch` is killed, whether a member is
// stopped and started meanwhile, and the seed of every random choice (mutations, kill moments,
// the member to stop). The same seed replays the same choices; which write a kill interrupts
// still depends on timing.
type campaignConfig struct {
	Kills      int
	StopMember bool
	Seed       int64
	Stable     int // services exported before the first sync and never touched
	Churn      int // names the mutations create, change and delete
}

// campaignStats are the counts the campaign prints.
type campaignStats struct {
	Kills, EarlyExits           int
	Mutations, Created, Changed int
	Deleted, FailedMutations    int
	WritesScraped               float64 // kubectl_mcs_writes_total of each process, read just before its kill
	SliceEvents, ImportEvents   map[watch.EventType]int
	StableDeletes, ChurnDeletes int
	ImportViolations            int
	Relists                     int
	FinalLines, FinalMembers    int
	Outage                      string
	Convergence, Duration       time.Duration
}

func campaignSeed(t *testing.T) int64 {
	t.Helper()
	if s := os.Getenv("E2E_SEED"); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("E2E_SEED=%q: %v", s, err)
		}
		return seed
	}
	return time.Now().UnixNano()
}

// TestSyncFaultCampaign: `sync --watch` SIGKILLed 20 times at random moments while services are
// created, changed and deleted, then started once more: every member ends with exactly what the
// final state calls for, and no managed EndpointSlice of an untouched service was ever deleted.
func TestSyncFaultCampaign(t *testing.T) {
	if os.Getenv("E2E_SOAK") != "" {
		t.Skip("E2E_SOAK: TestSyncSoak runs the campaign")
	}
	runCampaign(t, campaignConfig{Kills: 20, Seed: campaignSeed(t), Stable: 4, Churn: 6})
}

// TestSyncSoak (`make soak`, E2E_SOAK=1): the campaign with 50 kills and a member stopped and
// started in the middle.
func TestSyncSoak(t *testing.T) {
	if os.Getenv("E2E_SOAK") == "" {
		t.Skip("set E2E_SOAK=1 (make soak)")
	}
	kills := 50
	if s := os.Getenv("E2E_SOAK_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	runCampaign(t, campaignConfig{Kills: kills, StopMember: true, Seed: campaignSeed(t), Stable: 4, Churn: 8})
}

// modelSvc is what the campaign did to one service name: the port of all its Services and, per
// member, what exists there.
type modelSvc struct {
	name   string
	stable bool
	port   int32
	in     map[string]*modelIn
}

// modelIn is one member's part of a service: a Deployment and Service (created and deleted
// together), and a ServiceExport.
type modelIn struct {
	service  bool
	replicas int32
	export   bool
}

type campaign struct {
	t     *testing.T
	cfg   campaignConfig
	ns    string
	start time.Time

	mu    sync.Mutex // held for each mutation, and while a member stops or starts
	rng   *rand.Rand // mutations only
	up    map[string]bool
	svcs  []*modelSvc
	stats campaignStats
	errs  []string
	// history is every mutation, kill and outage with its time, printed when the campaign fails.
	history []string
}

func (c *campaign) logf(format string, args ...any) {
	c.t.Logf("[%6.2fs] %s", time.Since(c.start).Seconds(), fmt.Sprintf(format, args...))
}

// record adds to the history; called with c.mu held.
func (c *campaign) record(format string, args ...any) {
	c.history = append(c.history, fmt.Sprintf("[%6.2fs] %s", time.Since(c.start).Seconds(), fmt.Sprintf(format, args...)))
}

func runCampaign(t *testing.T, cfg campaignConfig) {
	t.Logf("campaign seed %d (replay with E2E_SEED=%d): %d kills, member outage %v", cfg.Seed, cfg.Seed, cfg.Kills, cfg.StopMember)
	c := &campaign{t: t, cfg: cfg, start: time.Now(), rng: rand.New(rand.NewSource(cfg.Seed)), up: map[string]bool{}}
	c.stats.SliceEvents = map[watch.EventType]int{}
	killRng := rand.New(rand.NewSource(cfg.Seed + 1))
	for _, m := range members {
		c.up[m] = true
	}
	c.ns = namespace(t, "e2e-campaign", members...)

	// Stable services: exported before the first sync, one or two exporters, never touched.
	for i := 0; i < cfg.Stable; i++ {
		s := &modelSvc{name: fmt.Sprintf("stable-%d", i), stable: true, port: 80, in: map[string]*modelIn{}}
		// One sole exporter in each member (the member stopped in a soak is one), then pairs.
		exporters := []string{members[i%len(members)]}
		if i >= len(members) {
			exporters = append(exporters, members[(i+1)%len(members)])
		}
		for _, m := range exporters {
			s.in[m] = &modelIn{service: true, replicas: int32(1 + i%2), export: true}
			if err := c.createService(m, s, s.in[m].replicas); err != nil {
				t.Fatal(err)
			}
			if err := c.createExport(m, s.name); err != nil {
				t.Fatal(err)
			}
		}
		c.svcs = append(c.svcs, s)
	}
	for i := 0; i < cfg.Churn; i++ {
		c.svcs = append(c.svcs, &modelSvc{name: fmt.Sprintf("churn-%d", i), port: 80, in: map[string]*modelIn{}})
	}
	want := c.waitForSources(2 * time.Minute)
	// The checker must see that nothing is imported yet: a checker that passes here is vacuous.
	if d := c.check(want); len(d) == 0 {
		t.Fatal("final-state checker found nothing wrong before any sync ran: it checks nothing")
	} else {
		c.logf("checker before the first sync: %d differences, as it must (e.g. %s)", len(d), d[0])
	}

	stable := map[string]map[string]bool{}
	for _, s := range c.svcs {
		if s.stable {
			stable[s.name] = map[string]bool{}
			for m := range s.in {
				stable[s.name][m] = true
			}
		}
	}
	ew := startEventWatch(t, c.ns, c.start, stable)

	ctx, stopMutations := context.WithCancel(context.Background())
	mutatorDone := make(chan struct{})
	go func() { defer close(mutatorDone); c.mutate(ctx) }()
	t.Cleanup(func() { stopMutations(); <-mutatorDone })

	outage := ""
	if cfg.StopMember {
		outage = members[killRng.Intn(len(members))]
	}
	for i := 0; i < cfg.Kills; i++ {
		p := startSyncProc(t, c.ns)
		delay := 200*time.Millisecond + time.Duration(killRng.Int63n(int64(2800*time.Millisecond)))
		select {
		case <-time.After(delay):
		case <-p.exited:
		}
		if i == cfg.Kills-1 {
			stopMutations() // the last process dies in the middle of the last mutations' work
			<-mutatorDone
		}
		if outage != "" && i == cfg.Kills/3 {
			c.setMember(outage, "stop")
			c.stats.Outage = fmt.Sprintf("%s stopped after kill %d", outage, i)
		}
		if outage != "" && i == 2*cfg.Kills/3 {
			c.setMember(outage, "start")
			c.stats.Outage += fmt.Sprintf(", started after kill %d", i)
		}
		c.stats.WritesScraped += scrapeWrites(p.metrics)
		select {
		case <-p.exited:
			c.stats.EarlyExits++
			t.Errorf("sync --watch #%d exited by itself before its kill (%v); output:\n%s", i+1, p.err, tail(p.out.String(), 40))
		default:
		}
		p.kill()
		c.stats.Kills++
		c.logf("SIGKILL %d/%d (pid %d, after %v)", i+1, cfg.Kills, p.cmd.Process.Pid, delay.Round(time.Millisecond))
		c.mu.Lock()
		c.record("SIGKILL %d/%d (pid %d, after %v)", i+1, cfg.Kills, p.cmd.Process.Pid, delay.Round(time.Millisecond))
		c.mu.Unlock()
	}
	if outage != "" && !c.isUp(outage) {
		c.setMember(outage, "start")
	}

	// A few changes with no controller running, so the last process has work of its own.
	c.mu.Lock()
	for i := 0; i < 3; i++ {
		c.step()
	}
	c.mu.Unlock()
	final := startSyncProc(t, c.ns)
	restarted := time.Now()
	want = c.waitForSources(3 * time.Minute)
	c.logf("the members' own pods and EndpointSlices settled %v after the last restart", time.Since(restarted).Round(100*time.Millisecond))
	var diff []string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
		diff = c.check(want)
		return len(diff) == 0, nil
	})
	c.stats.Convergence = time.Since(restarted)
	if err != nil {
		t.Errorf("not converged %v after the last restart (seed %d); - missing, + unexpected:\n%s\nsync --watch output:\n%s",
			c.stats.Convergence.Round(time.Second), cfg.Seed, strings.Join(diff, "\n"), tail(final.out.String(), 60))
	} else {
		c.logf("converged %v after the last restart", c.stats.Convergence.Round(100*time.Millisecond))
		c.selfCheck(want)
	}
	select {
	case <-final.exited:
		t.Errorf("the last sync --watch exited by itself (%v):\n%s", final.err, tail(final.out.String(), 40))
	default:
	}
	final.kill()
	time.Sleep(500 * time.Millisecond) // the last watch events
	ew.stop()

	// The watch: never a DELETE of a managed slice of an unchanged service, nor of its import, nor
	// an exporter dropped from the import; and it must have seen those slices created and those
	// imports complete (else it watched nothing).
	ew.mu.Lock()
	c.stats.SliceEvents = ew.counts["EndpointSlice"]
	c.stats.ImportEvents = ew.counts["ServiceImport"]
	c.stats.Relists = ew.relists
	for _, d := range ew.deletes {
		if stable[d.service] == nil {
			c.stats.ChurnDeletes++
			continue
		}
		c.stats.StableDeletes++
		how := "DELETE event"
		if d.gap {
			how = "gone when the watch resumed"
		}
		t.Errorf("%s: managed EndpointSlice %s of unchanged service %s (from %s) deleted at %v (%s)", d.member, d.name, d.service, d.source, d.at.Round(time.Millisecond), how)
	}
	c.stats.ImportViolations = len(ew.violations)
	for _, v := range ew.violations {
		t.Error(v)
	}
	for name, exporters := range stable {
		for _, m := range members {
			if !ew.complete[m+"/"+name] {
				t.Errorf("the watch never saw %s's ServiceImport in %s list all of %v: it is not watching", name, m, sortedKeys(exporters))
			}
			for src := range exporters {
				if !ew.added[m+"/"+name+"/"+src] {
					t.Errorf("the watch saw no managed slice of %s from %s being created in %s: it is not watching", name, src, m)
				}
			}
		}
	}
	ew.mu.Unlock()
	c.mu.Lock()
	for _, e := range c.errs {
		t.Error(e)
	}
	c.mu.Unlock()

	if t.Failed() || os.Getenv("E2E_CAMPAIGN_HISTORY") != "" {
		c.mu.Lock()
		t.Logf("campaign history (seed %d):\n%s", cfg.Seed, strings.Join(c.history, "\n"))
		c.mu.Unlock()
	}
	c.stats.Duration = time.Since(c.start)
	s := c.stats
	outageLine := "none"
	if s.Outage != "" {
		outageLine = s.Outage
	}
	result := "PASS"
	if t.Failed() {
		result = "FAIL"
	}
	t.Logf(`fault campaign summary (seed %d, %s, %v):
  kills:                       %d (processes that exited by themselves: %d)
  member outage:               %s
  mutations:                   %d (created %d, changed %d, deleted %d; failed %d)
  writes seen:                 kubectl_mcs_writes_total %.0f (scraped before each kill); managed EndpointSlice events added %d, modified %d, deleted %d
  DELETE of managed slices:    unchanged services %d, churned services %d (watches resumed after a gap %d times)
  imports of unchanged services deleted or short of an exporter: %d (ServiceImport events added %d, modified %d, deleted %d)
  final objects checked:       %d facts in %d members, converged %v after the last restart`,
		cfg.Seed, result, s.Duration.Round(time.Second),
		s.Kills, s.EarlyExits, outageLine,
		s.Mutations, s.Created, s.Changed, s.Deleted, s.FailedMutations,
		s.WritesScraped, s.SliceEvents[watch.Added], s.SliceEvents[watch.Modified], s.SliceEvents[watch.Deleted],
		s.StableDeletes, s.ChurnDeletes, s.Relists,
		s.ImportViolations, s.ImportEvents[watch.Added], s.ImportEvents[watch.Modified], s.ImportEvents[watch.Deleted],
		s.FinalLines, s.FinalMembers, s.Convergence.Round(100*time.Millisecond))
}

// selfCheck: against the converged members, a final state that differs in one fact must fail.
func (c *campaign) selfCheck(want []wantService) {
	c.t.Helper()
	breakOne := map[string]func([]wantService) []wantService{
		"an exporter missing": func(w []wantService) []wantService {
			for i, s := range w {
				if ex := s.exporters(); len(ex) > 0 {
					w[i].Exports = copyExports(s.Exports)
					delete(w[i].Exports, ex[0])
					return w
				}
			}
			return nil
		},
		"another port": func(w []wantService) []wantService {
			for i, s := range w {
				if len(s.exporters()) > 0 {
					w[i].Port++
					return w
				}
			}
			return nil
		},
		"an address fewer": func(w []wantService) []wantService {
			for i, s := range w {
				for _, m := range s.exporters() {
					if len(s.Exports[m].IPs) > 0 {
						w[i].Exports = copyExports(s.Exports)
						w[i].Exports[m] = &wantSource{IPs: s.Exports[m].IPs[1:], Slices: s.Exports[m].Slices}
						return w
					}
				}
			}
			return nil
		},
	}
	for name, f := range breakOne {
		w := f(append([]wantService{}, want...))
		if w == nil {
			continue
		}
		if d := c.check(w); len(d) == 0 {
			c.t.Errorf("checker self-check: a final state with %s matched the members", name)
		}
	}
}

func copyExports(in map[string]*wantSource) map[string]*wantSource {
	out := map[string]*wantSource{}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// check compares every member with the final state want, returning the differences.
func (c *campaign) check(want []wantService) []string {
	c.t.Helper()
	var got []string
	for _, m := range members {
		o, err := readMember(m, c.ns)
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", m, err)}
		}
		got = append(got, observedLines(m, o)...)
	}
	exp := expectedLines(members, want)
	c.stats.FinalLines, c.stats.FinalMembers = len(exp), len(members)
	return diffLines(exp, got)
}

func readMember(m, ns string) (memberObjects, error) {
	ctx, cl := context.Background(), clients[m]
	var o memberObjects
	for _, k := range []struct {
		gvrVersion string
		imports    bool
	}{{"v1beta1", true}, {"v1beta1", false}} {
		gvr := seGVR(k.gvrVersion)
		if k.imports {
			gvr = siGVR(k.gvrVersion)
		}
		l, err := cl.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return o, err
		}
		for _, u := range l.Items {
			if k.imports {
				var si mcsv1beta1.ServiceImport
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &si); err != nil {
					return o, err
				}
				o.Imports = append(o.Imports, si)
			} else {
				var se mcsv1beta1.ServiceExport
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &se); err != nil {
					return o, err
				}
				o.Exports = append(o.Exports, se)
			}
		}
	}
	svcs, err := cl.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return o, err
	}
	o.Services = svcs.Items
	slices, err := cl.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return o, err
	}
	o.Slices = slices.Items
	return o, nil
}

// waitForSources waits until every Deployment the campaign left runs exactly its replicas and
// the member's own EndpointSlices show exactly those pods, and returns the final state.
func (c *campaign) waitForSources(timeout time.Duration) []wantService {
	c.t.Helper()
	var want []wantService
	var why string
	lastLog := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if why != "" && time.Since(lastLog) > 15*time.Second {
			c.logf("waiting for the members' own pods and EndpointSlices: %s", why)
			lastLog = time.Now()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		want, why = nil, ""
		for _, s := range c.svcs {
			w := wantService{Name: s.name, Port: s.port, TargetPort: s.port + 8000, Exports: map[string]*wantSource{}}
			for _, m := range sortedKeys(s.in) {
				in := s.in[m]
				if !in.export {
					continue
				}
				if !in.service {
					w.Exports[m] = nil
					continue
				}
				ips, n, err := sourceState(m, c.ns, s.name)
				if err != nil {
					why = err.Error()
					return false, nil
				}
				if pods := podIPs(c.t, m, c.ns, s.name); len(pods) != int(in.replicas) || strings.Join(pods, ",") != strings.Join(ips, ",") {
					why = fmt.Sprintf("%s/%s: %d replicas wanted, pods %v, EndpointSlices %v", m, s.name, in.replicas, pods, ips)
					return false, nil
				}
				if all, _ := allPods(m, c.ns, s.name); all != int(in.replicas) {
					why = fmt.Sprintf("%s/%s: %d pods, %d replicas wanted", m, s.name, all, in.replicas)
					return false, nil
				}
				w.Exports[m] = &wantSource{IPs: ips, Slices: n}
			}
			want = append(want, w)
		}
		return true, nil
	})
	if err != nil {
		c.t.Fatalf("the members' own pods and EndpointSlices did not settle in %v: %s", timeout, why)
	}
	return want
}

// sourceState is every address (ready or not) of a Service's own EndpointSlices and how many
// there are; it errs while some address is not ready.
func sourceState(m, ns, svc string) ([]string, int, error) {
	l, err := clients[m].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: lblKubeService + "=" + svc})
	if err != nil {
		return nil, 0, err
	}
	var ips []string
	n := 0
	for _, s := range l.Items {
		if s.Labels[lblSliceManagedBy] == managedValue {
			continue
		}
		n++
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				return nil, 0, fmt.Errorf("%s/%s: endpoint %v not ready", m, svc, e.Addresses)
			}
			ips = append(ips, e.Addresses...)
		}
	}
	sort.Strings(ips)
	return ips, n, nil
}

func allPods(m, ns, app string) (int, error) {
	l, err := clients[m].kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func (c *campaign) isUp(m string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up[m]
}

// setMember stops or starts a member's processes, with no mutation in flight.
func (c *campaign) setMember(m, verb string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logf("%s %s", verb, m)
	c.record("%s %s", verb, m)
	if verb == "stop" {
		c.up[m] = false
	}
	testbed(c.t, verb, m)
	if verb == "start" {
		c.up[m] = true
	}
}

// mutate changes the churn services until ctx ends: one mutation every 0.1 to 0.6 s.
func (c *campaign) mutate(ctx context.Context) {
	for {
		c.mu.Lock()
		pause := 100*time.Millisecond + time.Duration(c.rng.Int63n(int64(500*time.Millisecond)))
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		c.mu.Lock()
		c.step()
		c.mu.Unlock()
	}
}

type mutation struct {
	what  string
	count *int
	do    func() error
}

// step applies one random mutation that the members that are up allow. Called with c.mu held.
func (c *campaign) step() {
	var ops []mutation
	for _, s := range c.svcs {
		if s.stable {
			continue
		}
		allUp := true
		for m, in := range s.in {
			if in.service && !c.up[m] {
				allUp = false
			}
		}
		hasService := false
		for _, m := range members {
			in := s.in[m]
			if in == nil {
				in = &modelIn{}
			}
			hasService = hasService || in.service
			if !c.up[m] {
				continue
			}
			s, m := s, m
			switch {
			case !in.service:
				ops = append(ops, mutation{fmt.Sprintf("create %s in %s", s.name, m), &c.stats.Created, func() error {
					r := int32(1 + c.rng.Intn(3))
					if err := c.createService(m, s, r); err != nil {
						return err
					}
					st := c.in(s, m)
					st.service, st.replicas = true, r
					if !st.export && c.rng.Intn(10) > 0 {
						if err := c.createExport(m, s.name); err != nil {
							return err
						}
						st.export = true
					}
					return nil
				}})
			default:
				ops = append(ops,
					mutation{fmt.Sprintf("scale %s in %s", s.name, m), &c.stats.Changed, func() error {
						r := int32(1 + c.rng.Intn(3))
						if err := c.scale(m, s.name, r); err != nil {
							return err
						}
						c.in(s, m).replicas = r
						return nil
					}},
					mutation{fmt.Sprintf("delete the Service and Deployment of %s in %s", s.name, m), &c.stats.Deleted, func() error {
						if err := c.deleteService(m, s.name); err != nil {
							return err
						}
						st := c.in(s, m)
						st.service, st.replicas = false, 0
						return nil
					}})
				if !in.export {
					ops = append(ops, mutation{fmt.Sprintf("export %s in %s", s.name, m), &c.stats.Created, func() error {
						if err := c.createExport(m, s.name); err != nil {
							return err
						}
						c.in(s, m).export = true
						return nil
					}})
				}
			}
			if in.export {
				ops = append(ops, mutation{fmt.Sprintf("unexport %s in %s", s.name, m), &c.stats.Deleted, func() error {
					if err := c.deleteExport(m, s.name); err != nil {
						return err
					}
					c.in(s, m).export = false
					return nil
				}})
			}
			if in.export && in.service {
				ops = append(ops, mutation{fmt.Sprintf("delete %s (export, Service, Deployment) in %s", s.name, m), &c.stats.Deleted, func() error {
					if err := c.deleteExport(m, s.name); err != nil {
						return err
					}
					c.in(s, m).export = false
					if err := c.deleteService(m, s.name); err != nil {
						return err
					}
					st := c.in(s, m)
					st.service, st.replicas = false, 0
					return nil
				}})
			}
		}
		if hasService && allUp {
			s := s
			ops = append(ops, mutation{fmt.Sprintf("change the port of %s everywhere", s.name), &c.stats.Changed, func() error {
				port := s.port
				for port == s.port {
					port = int32(80 + c.rng.Intn(3))
				}
				for _, m := range sortedKeys(s.in) {
					if !s.in[m].service {
						continue
					}
					if err := c.setPort(m, s.name, port); err != nil {
						return err
					}
				}
				s.port = port
				return nil
			}})
		}
	}
	if len(ops) == 0 {
		return
	}
	op := ops[c.rng.Intn(len(ops))]
	c.record("%s", op.what)
	c.stats.Mutations++
	*op.count++
	began := time.Now()
	err := op.do()
	if d := time.Since(began); d > 2*time.Second {
		c.record("(%q took %v)", op.what, d.Round(time.Millisecond))
	}
	if err != nil {
		c.stats.FailedMutations++
		c.errs = append(c.errs, fmt.Sprintf("mutation %q: %v (the expected final state may be off)", op.what, err))
	}
}

func (c *campaign) in(s *modelSvc, m string) *modelIn {
	if s.in[m] == nil {
		s.in[m] = &modelIn{}
	}
	return s.in[m]
}

func apiCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 20*time.Second)
}

// createService creates the Deployment and Service of s in m (ports: s.port -> s.port+8000).
func (c *campaign) createService(m string, s *modelSvc, replicas int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	labels := map[string]string{"app": s.name}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: c.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "serve", Image: "jeremyot/serve:0a40de8"}}},
			},
		},
	}
	if _, err := clients[m].kube.AppsV1().Deployments(c.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating Deployment %s: %w", m, s.name, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: c.ns},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: s.port, TargetPort: intstr.FromInt32(s.port + 8000), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := clients[m].kube.CoreV1().Services(c.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating Service %s: %w", m, s.name, err)
	}
	return nil
}

func (c *campaign) deleteService(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	bg := metav1.DeletePropagationBackground
	if err := clients[m].kube.CoreV1().Services(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("%s: deleting Service %s: %w", m, name, err)
	}
	if err := clients[m].kube.AppsV1().Deployments(c.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		return fmt.Errorf("%s: deleting Deployment %s: %w", m, name, err)
	}
	return nil
}

func (c *campaign) scale(m, name string, replicas int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := clients[m].kube.AppsV1().Deployments(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		d.Spec.Replicas = &replicas
		_, err = clients[m].kube.AppsV1().Deployments(c.ns).Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

func (c *campaign) setPort(m, name string, port int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := clients[m].kube.CoreV1().Services(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		s.Spec.Ports[0].Port, s.Spec.Ports[0].TargetPort = port, intstr.FromInt32(port+8000)
		_, err = clients[m].kube.CoreV1().Services(c.ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

func (c *campaign) createExport(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	se := &mcsv1beta1.ServiceExport{TypeMeta: metav1.TypeMeta{APIVersion: "multicluster.x-k8s.io/v1beta1", Kind: "ServiceExport"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(se)
	if err != nil {
		return err
	}
	if _, err := clients[m].dyn.Resource(seGVR("v1beta1")).Namespace(c.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating ServiceExport %s: %w", m, name, err)
	}
	return nil
}

func (c *campaign) deleteExport(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	if err := clients[m].dyn.Resource(seGVR("v1beta1")).Namespace(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("%s: deleting ServiceExport %s: %w", m, name, err)
	}
	return nil
}

// syncProc is one `sync --watch` process of the campaign.
type syncProc struct {
	cmd     *exec.Cmd
	out     *lockedBuffer
	metrics string
	exited  chan struct{}
	err     error
}

func startSyncProc(t *testing.T, ns string) *syncProc {
	t.Helper()
	p := &syncProc{out: &lockedBuffer{}, metrics: freePort(t), exited: make(chan struct{})}
	p.cmd = exec.Command(binary, "--kubeconfig", kubeconfig, "sync", "--watch", "-n", ns, "--contexts", allMembers,
		"--metrics-bind-address", p.metrics, "--health-probe-bind-address", "127.0.0.1:0")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	return p
}

// kill sends SIGKILL to the process (by its PID) and waits for it to end.
func (p *syncProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = append([]string{fmt.Sprintf("... (%d lines before)", len(l)-lines)}, l[len(l)-lines:]...)
	}
	return strings.Join(l, "\n")
}

// eventWatch records every event of the EndpointSlices and ServiceImports that sync manages in
// the campaign's namespace of every member, from before the first sync on. When a watch cannot
// resume (the member was down and its resourceVersion expired), it lists again and takes every
// object it knew that is gone as deleted.
type eventWatch struct {
	mu     sync.Mutex
	ns     string
	start  time.Time
	stable map[string]map[string]bool // exporters of each unchanged service
	counts map[string]map[watch.EventType]int
	// deletes are the managed slices deleted; added, member/service/source of every slice seen
	// created; complete, member/service of every unchanged service's import seen listing all
	// its exporters.
	deletes         []sliceEvent
	added, complete map[string]bool
	violations      []string
	relists         int
	cancel          context.CancelFunc
	done            sync.WaitGroup
}

type sliceEvent struct {
	member, name, service, source string
	at                            time.Duration
	gap                           bool
}

var watchedKinds = []struct {
	kind, selector string
	gvr            schema.GroupVersionResource
}{
	{"EndpointSlice", lblSliceManagedBy + "=" + managedValue, schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}},
	{"ServiceImport", lblManagedBy + "=" + managedValue, siGVR("v1beta1")},
}

func startEventWatch(t *testing.T, ns string, start time.Time, stable map[string]map[string]bool) *eventWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ew := &eventWatch{ns: ns, start: start, stable: stable, counts: map[string]map[watch.EventType]int{},
		added: map[string]bool{}, complete: map[string]bool{}, cancel: cancel}
	for _, k := range watchedKinds {
		ew.counts[k.kind] = map[watch.EventType]int{}
		for _, m := range members {
			api := clients[m].dyn.Resource(k.gvr).Namespace(ns)
			l, err := api.List(ctx, metav1.ListOptions{LabelSelector: k.selector})
			if err != nil {
				t.Fatalf("%s: listing %ss: %v", m, k.kind, err)
			}
			live := map[types.UID]*unstructured.Unstructured{}
			for i := range l.Items {
				live[l.Items[i].GetUID()] = &l.Items[i]
			}
			ew.done.Add(1)
			go func() {
				defer ew.done.Done()
				ew.run(ctx, m, k.kind, k.selector, api, l.GetResourceVersion(), live)
			}()
		}
	}
	t.Cleanup(ew.stop)
	return ew
}

func (ew *eventWatch) stop() {
	ew.cancel()
	ew.done.Wait()
}

func (ew *eventWatch) run(ctx context.Context, m, kind, sel string, api dynamic.ResourceInterface, rv string, live map[types.UID]*unstructured.Unstructured) {
	for ctx.Err() == nil {
		w, err := api.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ew.relist(ctx, m, kind, sel, api, live)
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					rv = ew.relist(ctx, m, kind, sel, api, live)
				}
				break
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			ew.mu.Lock()
			ew.counts[kind][ev.Type]++
			if ev.Type == watch.Deleted {
				delete(live, u.GetUID())
			} else {
				live[u.GetUID()] = u
			}
			ew.on(m, kind, ev.Type, u, false)
			ew.mu.Unlock()
		}
		w.Stop()
	}
}

// on checks one event; called with ew.mu held.
func (ew *eventWatch) on(m, kind string, typ watch.EventType, u *unstructured.Unstructured, gap bool) {
	at := time.Since(ew.start).Round(time.Millisecond)
	how := "a DELETE event"
	if gap {
		how = "gone when the watch resumed"
	}
	switch kind {
	case "EndpointSlice":
		l := u.GetLabels()
		switch typ {
		case watch.Added:
			ew.added[m+"/"+l[lblMCSService]+"/"+l[lblSourceCluster]] = true
		case watch.Deleted:
			ew.deletes = append(ew.deletes, sliceEvent{member: m, name: u.GetName(), service: l[lblMCSService],
				source: l[lblSourceCluster], at: time.Since(ew.start), gap: gap})
		}
	case "ServiceImport":
		exporters := ew.stable[u.GetName()]
		if exporters == nil {
			return
		}
		key := m + "/" + u.GetName()
		if typ == watch.Deleted {
			ew.violations = append(ew.violations, fmt.Sprintf("%s: ServiceImport of unchanged service %s deleted at %v (%s)", m, u.GetName(), at, how))
			return
		}
		clusters, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		var got []string
		for _, c := range clusters {
			if cm, ok := c.(map[string]any); ok {
				got = append(got, fmt.Sprint(cm["cluster"]))
			}
		}
		sort.Strings(got)
		want := sortedKeys(exporters)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			ew.complete[key] = true
		} else if ew.complete[key] {
			ew.violations = append(ew.violations, fmt.Sprintf("%s: ServiceImport of unchanged service %s says status.clusters %v at %v, after %v",
				m, u.GetName(), got, at, want))
		}
	}
}

// relist replaces live with a fresh list, checking what changed while nobody watched.
func (ew *eventWatch) relist(ctx context.Context, m, kind, sel string, api dynamic.ResourceInterface, live map[types.UID]*unstructured.Unstructured) string {
	for ctx.Err() == nil {
		l, err := api.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		now := map[types.UID]bool{}
		for _, o := range l.Items {
			now[o.GetUID()] = true
		}
		ew.mu.Lock()
		ew.relists++
		for uid, o := range live {
			if !now[uid] {
				ew.on(m, kind, watch.Deleted, o, true)
				delete(live, uid)
			}
		}
		for i := range l.Items {
			o := &l.Items[i]
			typ := watch.Modified
			if live[o.GetUID()] == nil {
				typ = watch.Added
			}
			live[o.GetUID()] = o
			ew.on(m, kind, typ, o, true)
		}
		ew.mu.Unlock()
		return l.GetResourceVersion()
	}
	return ""
}

var scrapeClient = &http.Client{Timeout: 2 * time.Second}

// scrapeWrites is kubectl_mcs_writes_total of a running process (0 when it does not answer yet).
func scrapeWrites(addr string) float64 {
	resp, err := scrapeClient.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	v, _, _ := promtext.Sum(resp.Body, "kubectl_mcs_writes_total")
	return v
}
