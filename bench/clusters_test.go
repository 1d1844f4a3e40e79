package main

import (
	"encoding/xml"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func clusterRun(binary, date string, eps, clusters int, rss float64) *Results {
	return &Results{Binary: binary, Date: date, Services: 1000, EndpointsPerSlice: eps, Clusters: clusters, ImportingClusters: clusters,
		PeakRSSMiB: rss, ConvergeS: 30, ConvergeFloorS: 20, ConvergeWrites: 6000, PropagationP50: 20, PropagationP99: 40, FanOutP50: 10, FanOutP99: 30,
		WritesPerChange: float64(clusters), Samples: 50, PropagationSyncCPUS: 1, IdleSeconds: 30,
		ConvergeCPU: &CPUUse{ByProgram: map[string]float64{"sync": 12.5}}}
}

func TestClusterSeries(t *testing.T) {
	runs := []*Results{
		clusterRun("new", "2026-11-26T12:00:00Z", 2, 10, 160),
		clusterRun("old", "2026-11-26T10:00:00Z", 2, 10, 300),
		clusterRun("old", "2026-11-26T09:00:00Z", 2, 5, 100),
		clusterRun("new", "2026-11-26T11:00:00Z", 2, 5, 150),
		clusterRun("new", "2026-11-26T13:00:00Z", 2, 5, 140), // a rerun replaces the earlier one
		clusterRun("new", "2026-11-26T14:00:00Z", 50, 5, 145),
		clusterRun("new", "2026-11-26T14:30:00Z", 0, 40, 400), // before -endpoints: 2 per slice
	}
	ss := clusterSeries(runs)
	if len(ss) != 3 {
		t.Fatalf("want 3 series (old, new, new at 50 endpoints), got %d", len(ss))
	}
	old, cur := ss[0], ss[1]
	if old.binary != "old" || cur.binary != "new" || ss[2].endpoints != 50 {
		t.Fatalf("series out of order: %s, %s, %s", old.name(), cur.name(), ss[2].name())
	}
	if len(cur.runs) != 3 || cur.runs[0].PeakRSSMiB != 140 || cur.runs[2].Clusters != 40 {
		t.Fatalf("new series: want the latest run per size in order of members, got %+v", cur.runs)
	}
	if d, ok := perMemberAdded(old, 1); !ok || d != 40 {
		t.Errorf("old: %v MiB per member added, want 40", d)
	}
	if _, ok := perMemberAdded(cur, 0); ok {
		t.Error("the first size has no slope")
	}

	table := clustersTable(ss, "bench/out/clusters.svg", "BENCHMARKS.md")
	for _, want := range []string{
		"| old | 1000 × 2 | 10 | 2026-11-26T10:00:00 | 300 MiB (+40.0 MiB ✗) | 30.0 s / 20.0 s = 1.50x | 12.5, 0.020 | 6000 (200/s; 300/s) |",
		"| new | 1000 × 2 | 10 |",
		"| new | 1000 × 2 | 40 | 2026-11-26T14:30:00 | 400 MiB (+8.0 MiB ✗) | 30.0 s / 20.0 s = 1.50x ✓ |",
		"20.0 / 40.0 ms, 10.0 / 30.0 = 2.00x ✗ | 40.00 (40) ✓ | 0 in 30 s ✓ | - |",
		"](bench/out/clusters.svg)",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "(+-") {
		t.Errorf("signed twice:\n%s", table)
	}
}

func TestClustersPlotIsSVG(t *testing.T) {
	ss := clusterSeries([]*Results{clusterRun("a", "1", 2, 5, 100), clusterRun("a", "2", 2, 40, 180), clusterRun("b <&>", "3", 50, 5, 90)})
	plot := clustersPlot(ss)
	dec := xml.NewDecoder(strings.NewReader(plot))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v\n%s", err, plot)
			}
			break
		}
	}
	// Two panels, each a curve per series and the converge panel a floor per series.
	if n := strings.Count(plot, "<polyline"); n != 6 {
		t.Errorf("%d curves, want 6", n)
	}
	path := filepath.Join(t.TempDir(), "B.md")
	if err := renderClusters(nil, path, filepath.Join(t.TempDir(), "c.svg")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), clustersBeginMark) || !strings.Contains(string(data), clustersEndMark) {
		t.Errorf("no section written:\n%s", data)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 3: 5, 40: 50, 180: 200, 230: 250, 1000: 1000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]syncMode{"": modeHost, "host": modeHost, "per-member": modePerMember} {
		if got, err := parseMode(in); err != nil || got != want {
			t.Errorf("parseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"per_member", "Host", "local"} {
		if _, err := parseMode(in); err == nil {
			t.Errorf("parseMode(%q): no error", in)
		}
	}
	if got := locals(modePerMember, []string{"member1", "member2", "member3"}); strings.Join(got, ",") != "member1,member2,member3" {
		t.Errorf("per-member: one process per member, the first measured; got %q", got)
	}
	if got := locals(modeHost, []string{"member1", "member2", "member3"}); len(got) != 1 || got[0] != "" {
		t.Errorf("host: one process without --local; got %q", got)
	}
}

// Writes and queue depths are summed over every process's metrics, by label as promtext reads them.
func TestScrapeSumOverProcesses(t *testing.T) {
	serve := func(body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		t.Cleanup(s.Close)
		return s.URL + "/metrics"
	}
	urls := []string{
		serve("kubectl_mcs_writes_total{cluster=\"member1\",kind=\"EndpointSlice\"} 3\nkubectl_mcs_queue_depth 0\n"),
		serve("kubectl_mcs_writes_total{cluster=\"member2\",kind=\"EndpointSlice\"} 4\nkubectl_mcs_writes_total{cluster=\"member2\",kind=\"ServiceImport\"} 1\nkubectl_mcs_queue_depth 2\n"),
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"kubectl_mcs_writes_total", nil, 8},
		{"kubectl_mcs_writes_total", []string{`cluster="member2"`}, 5},
		{"kubectl_mcs_writes_total", []string{`kind="EndpointSlice"`}, 7},
		{"kubectl_mcs_queue_depth", nil, 2},
	} {
		if got, err := scrapeSum(urls, c.name, c.labels...); err != nil || got != c.want {
			t.Errorf("%s %v: %v, %v; want %v", c.name, c.labels, got, err, c.want)
		}
	}
	if _, err := scrapeSum(append(urls, "http://127.0.0.1:1/metrics"), "kubectl_mcs_writes_total"); err == nil {
		t.Error("a process that does not answer: no error")
	}
}

// The CPU of per-member mode's syncs: the measured one's alone, and every one's.
func TestSyncCPUByMode(t *testing.T) {
	u := &CPUUse{ByProgram: map[string]float64{"sync": 2, otherSyncs: 6, "etcd": 9}}
	if syncCPU(u) != 2 || allSyncsCPU(u) != 8 {
		t.Errorf("sync %v, all syncs %v; want 2 and 8", syncCPU(u), allSyncsCPU(u))
	}
	if got := programName(42, map[int]string{42: otherSyncs}, "kubectl-mcs"); got != otherSyncs {
		t.Errorf("programName: %q", got)
	}
}

func perMemberRun(date string, clusters int, rss, converge, cpuPerChange float64) *Results {
	r := clusterRun("new", date, 2, clusters, rss)
	r.Services, r.Mode, r.Measured, r.ConvergeS = 100, string(modePerMember), "member1", converge
	r.PropagationSyncCPUS = cpuPerChange * float64(r.Samples)
	r.PropagationSyncsCPUS = r.PropagationSyncCPUS * float64(clusters)
	r.SyncsPeakRSSMiB = rss * float64(clusters)
	r.ConvergeCPU = &CPUUse{ByProgram: map[string]float64{"sync": 1, otherSyncs: float64(clusters - 1)}}
	return r
}

func TestPerMemberTable(t *testing.T) {
	host := func(date string, clusters int, rss, converge float64) *Results {
		r := clusterRun("new", date, 2, clusters, rss)
		r.Services, r.ConvergeS = 100, converge
		return r
	}
	ss := clusterSeries([]*Results{
		host("2026-11-28T10:00:00Z", 5, 60, 10), host("2026-11-28T11:00:00Z", 40, 200, 120),
		perMemberRun("2026-11-28T10:30:00Z", 5, 40, 12, 0.002), perMemberRun("2026-11-28T11:30:00Z", 40, 75, 100, 0.003),
	})
	if len(ss) != 2 || ss[0].mode != modeHost || ss[1].mode != modePerMember {
		t.Fatalf("want a host and a per-member series, host first: %v", ss)
	}
	if !strings.Contains(ss[1].name(), "per-member (member1's sync)") {
		t.Errorf("series name %q", ss[1].name())
	}
	table := clustersTable(ss, "bench/out/clusters.svg", "BENCHMARKS.md")
	for _, want := range []string{
		"| new | 100 × 2 | 40 | 2026-11-28T11:00:00 | 200 MiB (+4.0 MiB ✓) |", // host's row, as before
		"**Per-member mode**",
		"| new | 100 × 2 | 5 | 2026-11-28T10:30:00 | 40 MiB (-) | 1.0, 0.0020 (-) | 200 MiB; 60 MiB | 5.0, 0.010; 12.5, 0.020 | 12.0 s / 20.0 s = 0.60x | 12.0 s / 10.0 s = 1.20x |",
		"| new | 100 × 2 | 40 | 2026-11-28T11:30:00 | 75 MiB (+1.0 MiB ✓) | 1.0, 0.0030 (1.50x ✗) | 3000 MiB; 200 MiB | 40.0, 0.120; 12.5, 0.020 | 100.0 s / 20.0 s = 5.00x | 100.0 s / 120.0 s = 0.83x ✓ |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestFitLine(t *testing.T) {
	l := fitLine([]float64{5, 10, 20, 40}, []float64{20, 30, 50, 90}) // y = 10 + 2x
	if math.Abs(l.at0-10) > 1e-9 || math.Abs(l.slope-2) > 1e-9 || math.Abs(l.at(255)-520) > 1e-9 {
		t.Errorf("fit %+v", l)
	}
	if l := fitLine([]float64{5}, []float64{7}); l.at(100) != 7 {
		t.Errorf("one point: %+v", l)
	}
	if l := fitLine(nil, nil); l.at(3) != 0 {
		t.Errorf("no point: %+v", l)
	}
}

// The model's columns: host mode's one sync on its line; one member's sync on its own; every
// member's sync, m times the line of their mean.
func TestModelColumns(t *testing.T) {
	host := &series{mode: modeHost, runs: []*Results{clusterRun("h", "1", 2, 5, 60), clusterRun("h", "2", 2, 40, 200)}} // 4 MiB a member
	pm := &series{mode: modePerMember, runs: []*Results{perMemberRun("3", 5, 40, 12, 0.002), perMemberRun("4", 40, 75, 100, 0.002)}}
	rss := modelColumns(modelFigures[0], host, pm, 255)
	// host: 60 + 4 × 250 = 1060; one: 40 + 1 × 250 = 290; all: the mean is the one's here, 255 × 290.
	if rss[0] != "1.0 GiB (+4 MiB a member)" || rss[1] != "290 MiB (+1 MiB a member)" || rss[2] != "72.2 GiB (+545 MiB a member)" {
		t.Errorf("peak RSS columns %q", rss)
	}
	perChange := modelColumns(modelFigures[2], host, pm, 255)
	if perChange[1] != "0.002 CPU s (+0 CPU s a member)" || perChange[2] != "0.510 CPU s (+0.002 CPU s a member)" {
		t.Errorf("CPU per change columns %q", perChange)
	}
	writes := modelColumns(modelFigures[3], host, pm, 255)
	if writes[0] != "255.0 (+1 a member)" || writes[1] != "1.0 (+0 a member)" || writes[2] != "255.0 (+1 a member)" {
		t.Errorf("writes per change columns %q", writes)
	}
	model := clustersModel([]*series{host, pm})
	if !strings.Contains(model, "| at 255 members | host mode: its sync | per-member: one member's sync | per-member: all 255 syncs |") {
		t.Errorf("model:\n%s", model)
	}
	if m := clustersModel([]*series{host}); !strings.Contains(m, "No size measured yet") {
		t.Errorf("host alone:\n%s", m)
	}
}
