package main

import (
	"encoding/xml"
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
