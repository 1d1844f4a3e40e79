package main

// What bench -karmada reports: bench/out/karmada.json, the CDF picture, and the table of
// BENCHMARKS.md's "Against Karmada" section with the targets met or missed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	karmadaBeginMark = "<!-- bench-karmada:begin (written by make bench-karmada) -->"
	karmadaEndMark   = "<!-- bench-karmada:end -->"

	// Targets: under churn sync is at least churnSpeedup times faster than Karmada; idle it
	// stays within idleOverFloor of the two-hop floor.
	churnSpeedup  = 10.0
	idleOverFloor = 1.2
)

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func runTitle(r KarmadaRun, rate int) string {
	if r.Churn {
		return fmt.Sprintf("%d services, churn (%d changes/s per path)", r.Services, rate)
	}
	return fmt.Sprintf("%d services, idle", r.Services)
}

func cdfPanels(res *KarmadaResults) []cdfPanel {
	var out []cdfPanel
	for _, r := range res.Runs {
		out = append(out, cdfPanel{Title: runTitle(r, res.ChurnRate), Series: []cdfSeries{
			{Name: "kubectl mcs sync --watch", Color: "#1f77b4", Samples: r.Sync.Samples},
			{Name: "Karmada MultiClusterService", Color: "#d62728", Samples: r.Karmada.Samples},
			{Name: "two-hop floor", Color: "#7f7f7f", Samples: r.Floor.Samples},
		}})
	}
	return out
}

func dist(l Latency) string {
	return fmt.Sprintf("%.1f / %.1f / %.1f", l.P50, l.P99, l.Max)
}

// karmadaTable is the generated part of the section: one row per size and load, then the targets.
func karmadaTable(res *KarmadaResults) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Run of %s (load %s): member1 provides, member2 consumes; per row %d samples of each path, interleaved; "+
		"churn: %d provider-slice changes a second on each path's other services; %s.\n\n",
		res.Date, res.Load, res.Samples, res.ChurnRate, res.Machine)
	s.WriteString("| services | load | kubectl mcs sync, ms p50 / p99 / max | Karmada, ms p50 / p99 / max | two-hop floor, ms p50 / p99 / max | sync / Karmada p50, p99 | sync / floor p50, p99 | Karmada / floor p50, p99 | Karmada's collect queue, deepest |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Runs {
		load := "idle"
		if r.Churn {
			load = fmt.Sprintf("churn, %.1f/s per path", r.Achieved)
		}
		queue := "?"
		if r.CollectQueue >= 0 {
			queue = fmt.Sprintf("%.0f", r.CollectQueue)
		}
		fmt.Fprintf(&s, "| %d | %s | %s | %s | %s | %.3fx, %.3fx | %.2fx, %.2fx | %.2fx, %.2fx | %s |\n", r.Services, load,
			dist(r.Sync), dist(r.Karmada), dist(r.Floor),
			ratio(r.Sync.P50, r.Karmada.P50), ratio(r.Sync.P99, r.Karmada.P99),
			ratio(r.Sync.P50, r.Floor.P50), ratio(r.Sync.P99, r.Floor.P99),
			ratio(r.Karmada.P50, r.Floor.P50), ratio(r.Karmada.P99, r.Floor.P99), queue)
	}
	s.WriteString("\n| target | services | measured | |\n|---|---|---|---|\n")
	for _, t := range karmadaTargets(res) {
		fmt.Fprintf(&s, "| %s | %d | %s | %s |\n", t.what, t.services, t.measured, verdict(t.met))
	}
	if res.Error != "" {
		fmt.Fprintf(&s, "\nThe run stopped early: %s.\n", res.Error)
	}
	return s.String()
}

type karmadaTarget struct {
	what     string
	services int
	measured string
	met      bool
}

// karmadaTargets judges every run: churn runs on the speed-up over Karmada, idle runs on the
// distance to the floor (with Karmada's beside it).
func karmadaTargets(res *KarmadaResults) []karmadaTarget {
	var out []karmadaTarget
	for _, r := range res.Runs {
		for _, q := range []struct {
			name                string
			sync, karmada, flor float64
		}{{"p50", r.Sync.P50, r.Karmada.P50, r.Floor.P50}, {"p99", r.Sync.P99, r.Karmada.P99, r.Floor.P99}} {
			if r.Churn {
				speedup := ratio(q.karmada, q.sync)
				out = append(out, karmadaTarget{
					what:     fmt.Sprintf("under churn, sync at least %gx faster than Karmada, %s", churnSpeedup, q.name),
					services: r.Services, measured: fmt.Sprintf("%.1fx faster (%.1f ms against %.1f ms)", speedup, q.sync, q.karmada),
					met: q.sync > 0 && speedup >= churnSpeedup})
				continue
			}
			over := ratio(q.sync, q.flor)
			out = append(out, karmadaTarget{
				what:     fmt.Sprintf("idle, sync within %gx of the two-hop floor, %s", idleOverFloor, q.name),
				services: r.Services, measured: fmt.Sprintf("%.2fx (Karmada: %.2fx)", over, ratio(q.karmada, q.flor)),
				met: q.flor > 0 && over <= idleOverFloor})
		}
	}
	return out
}
