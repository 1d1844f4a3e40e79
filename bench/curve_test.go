package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCurveTables(t *testing.T) {
	runs := []*Results{
		{Services: 3000, Clusters: 5, QPS: 500, Burst: 1000, Workers: 16, PropagationP50: 30, FloorP50: 20,
			FanOutP50: 25, ConvergeS: 110, ConvergeFloorS: 100, ConvergeCreateFloorS: 55, RSSPerEndpointKiB: 1.5, PeakRSSMiB: 300, InformerFloorRSSMiB: 200, DeploymentMemoryLimitMiB: 512, StatusS: 3, StatusFloorS: 2,
			BusyRate: 100, BusyP50: 90, BusyP99: 1200, BusyFloorP50: 30,
			BusyBed: &bedCapacity{ChangesPerS: 100, WritesPerS: 500, LagP50: 40, LagP99: 90}},
		{Services: 1000, Clusters: 5, PropagationP50: 88, FloorP50: 39, ConvergeS: 765, ConvergeFloorS: 207,
			RSSPerEndpointKiB: 19.1, StatusS: 13.3, StatusFloorS: 2.8, BusyError: "churn: 3 of its changes failed"},
	}
	out := curveTables(runs)
	rows := strings.Split(out, "\n")
	var curve []string
	for _, r := range rows {
		if strings.HasPrefix(r, "| 1000 ") || strings.HasPrefix(r, "| 3000 ") {
			curve = append(curve, r)
		}
	}
	if len(curve) != 4 {
		t.Fatalf("want two rows in each table, got %d:\n%s", len(curve), out)
	}
	// Sorted by size; each ratio judged against its target.
	for _, want := range []struct{ row, has string }{
		{curve[0], "| 1000 | 5 | 50/100 (default) | 2.26x ✗ | - | - | - | 3.70x ✗ | - | 19.10 ✗ | - | - | 4.75x ✗ |"},
		{curve[1], "| 3000 | 5 | 500/1000, 16 workers | 1.50x ✓ | 1.20x | 3.00x ✗ | 1.20 s ✗ | 1.10x ✓ | 2.00x | 1.50 ✓ | 1.50x | 300 / 512 MiB ✓ | 1.50x ✓ |"},
		{curve[2], "failed: churn: 3 of its changes failed"},
		{curve[3], "(100 changes/s"},
		{curve[3], "the bed carried 100 changes/s, 500 writes/s (change to last copy 40 / 90 ms)"},
	} {
		if !strings.Contains(want.row, want.has) {
			t.Errorf("row %q lacks %q", want.row, want.has)
		}
	}
}

// Of two runs of one configuration, the later one alone makes the rows, whatever their order.
func TestCurveTablesKeepTheLatestRunOfAConfiguration(t *testing.T) {
	run := func(date string, p50 float64) *Results {
		return &Results{Date: date, Services: 1000, Clusters: 5, QPS: 500, Burst: 1000, Workers: 16, PropagationP50: p50, FloorP50: 10}
	}
	for _, runs := range [][]*Results{
		{run("2026-11-25T10:00:00Z", 30), run("2026-11-27T10:00:00Z", 15)},
		{run("2026-11-27T10:00:00Z", 15), run("2026-11-25T10:00:00Z", 30)},
	} {
		out := curveTables(append(runs, &Results{Date: "2026-11-20T10:00:00Z", Services: 1000, Clusters: 5, PropagationP50: 20, FloorP50: 10}))
		var rows []string
		for _, r := range strings.Split(out, "\n") {
			if strings.HasPrefix(r, "| 1000 | 5 | 500/1000") {
				rows = append(rows, r)
			}
		}
		if len(rows) != 2 || !strings.Contains(rows[0], "| 1.50x ✓ |") || !strings.Contains(out, "| 1000 | 5 | 50/100 (default) |") {
			t.Errorf("want the 2026-11-27 run alone (1.50x) in each table, and the default-QPS run beside it:\n%s", out)
		}
	}
}

func TestRewriteSectionKeepsTheOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	start := "# B\n" + beginMark + "\nold bench\n" + endMark + "\n"
	if err := os.WriteFile(path, []byte(start), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"curve one\n", "curve two\n"} {
		if err := rewriteSection(path, scaleBeginMark, scaleEndMark, table); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	got := string(data)
	if !strings.Contains(got, "old bench") || strings.Contains(got, "curve one") || strings.Count(got, "curve two") != 1 {
		t.Errorf("sections mixed up:\n%s", got)
	}
}

func TestConvergePolling(t *testing.T) {
	for _, c := range []struct {
		services, clusters int
		every              time.Duration
	}{{200, 3, 20 * time.Millisecond}, {1000, 5, 100 * time.Millisecond}, {10000, 5, time.Second}} {
		every, limit := convergePolling(c.services, c.clusters)
		if every != c.every {
			t.Errorf("%d services x %d clusters: every %v, want %v", c.services, c.clusters, every, c.every)
		}
		if limit < 10*time.Minute {
			t.Errorf("%d services x %d clusters: limit %v under the 10 min floor", c.services, c.clusters, limit)
		}
	}
}
