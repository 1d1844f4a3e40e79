//go:build e2e

package e2e

// The fault campaign (DEVELOPERS.md, "The fault campaign and make soak"): TestSyncFaultCampaign and
// TestSyncSoak, the driver runCampaign, and the sync --watch processes it starts and kills. Its
// mutations are in campaign_mutate_test.go, its event watch in campaign_watch_test.go, what it reads
// back from the members in campaign_members_test.go, and the final state it expects in
// campaign_state_test.go.

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

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
