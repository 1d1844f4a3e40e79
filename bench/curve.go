package main

import (
	"fmt"
	"sort"
	"strings"
)

const (
	scaleBeginMark = "<!-- bench-scale:begin (written by make bench-scale) -->"
	scaleEndMark   = "<!-- bench-scale:end -->"
)

// renderCurve writes the bench-scale section: one row per configuration (size, clusters, rate
// limit), its latest run, each figure against its floor from the same run, and whether the
// targets hold.
func renderCurve(paths []string, markdown string) error {
	runs, err := readResults(paths)
	if err != nil {
		return err
	}
	table := curveTables(runs)
	fmt.Println(table)
	if markdown == "" {
		return nil
	}
	return rewriteSection(markdown, scaleBeginMark, scaleEndMark, table)
}

func limit(r *Results) string {
	s := fmt.Sprintf("%g/%d", r.QPS, r.Burst)
	if r.QPS == 0 {
		s = "50/100 (default)"
	}
	if r.Workers > 0 {
		s += fmt.Sprintf(", %d workers", r.Workers)
	}
	return s
}

// latestPerConfiguration keeps, of the runs of one configuration (services, clusters, QPS,
// burst, workers), the latest: the tables are results, not a log of every build's run.
func latestPerConfiguration(runs []*Results) []*Results {
	latest := map[string]*Results{}
	var order []string
	for _, r := range runs {
		k := fmt.Sprintf("%d/%d/%g/%d/%d", r.Services, r.Clusters, r.QPS, r.Burst, r.Workers)
		if o, ok := latest[k]; !ok {
			order = append(order, k)
		} else if o.Date > r.Date {
			continue
		}
		latest[k] = r
	}
	out := make([]*Results, 0, len(order))
	for _, k := range order {
		out = append(out, latest[k])
	}
	return out
}

func curveTables(runs []*Results) string {
	runs = latestPerConfiguration(runs)
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Services != runs[j].Services {
			return runs[i].Services < runs[j].Services
		}
		if runs[i].Clusters != runs[j].Clusters {
			return runs[i].Clusters > runs[j].Clusters
		}
		return runs[i].QPS < runs[j].QPS
	})
	var s strings.Builder
	s.WriteString("Each run: N services exported from 2 of the clusters, 2 endpoints per slice, imported by every cluster; " +
		"floors from the same run. Targets: propagation p50 ≤ 1.5x; busy (under churn) p50 ≤ 2x and p99 ≤ 1 s; converge ≤ 1.2x; 0 idle writes; ≤ 2 KiB RSS per cached endpoint; `status -A` ≤ 2x. " +
		"The targets are judged on two floors: the two-hop floor for propagation, and for converge sync's own writes replayed by a plain client at the same QPS and concurrency. " +
		"Beside them, for the explanation: the fan-out floor (the second hop written in every cluster at once, as sync must), the create floor (as many ConfigMap creates) " +
		"and the peak RSS of bare client-go informers holding the same objects.\n\n")
	s.WriteString("**The curve** (ratio to the floor of the same run)\n\n")
	s.WriteString("| services | clusters | QPS/burst, workers (4 where not shown) | p50 idle | p50 idle / fan-out floor | p50 busy | p99 busy | converge | converge / create floor | KiB RSS / endpoint | RSS / bare informers | peak RSS / generated limit | `status -A` |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		p50, busy := ratio(r.PropagationP50, r.FloorP50), ratio(r.BusyP50, r.BusyFloorP50)
		conv, st := ratio(r.ConvergeS, r.ConvergeFloorS), ratio(r.StatusS, r.StatusFloorS)
		fmt.Fprintf(&s, "| %d | %d | %s | %.2fx %s | %s | %s | %s | %.2fx %s | %s | %.2f %s | %s | %s | %.2fx %s |\n", r.Services, r.Clusters, limit(r),
			p50, mark(p50 <= 1.5), ratioOrDash(r.PropagationP50, r.FanOutP50), busyCell(r, busy), busyP99Cell(r), conv, mark(conv <= 1.2),
			ratioOrDash(r.ConvergeS, r.ConvergeCreateFloorS), r.RSSPerEndpointKiB, mark(r.RSSPerEndpointKiB <= 2),
			ratioOrDash(r.PeakRSSMiB, r.InformerFloorRSSMiB), withinLimit(r), st, mark(st <= 2))
	}
	s.WriteString("\n**The figures**\n\n")
	s.WriteString("| services | clusters | QPS/burst | run (UTC), load, binary | converge (writes) / replay floor (watched as converge was, when run), create floor | p50 / p99 idle, floor, fan-out floor | p50 / p99 busy, floor (changes/s) | writes per change idle / busy | idle writes | peak RSS (endpoints), bare informers | `status -A` / bare lists |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		floor := fmt.Sprintf("%.1f s, %.1f s", r.ConvergeFloorS, r.ConvergeCreateFloorS)
		if r.ConvergeWatchedFloorS > 0 {
			floor = fmt.Sprintf("%.1f s (watched %.1f s), %.1f s", r.ConvergeFloorS, r.ConvergeWatchedFloorS, r.ConvergeCreateFloorS)
		}
		if r.FloorFraction > 0 && r.FloorFraction < 1 {
			floor += fmt.Sprintf(" (%.0f%% measured)", r.FloorFraction*100)
		}
		fmt.Fprintf(&s, "| %d | %d | %s | %s, %s | %.1f s (%d) / %s | %.1f / %.1f ms, %.1f / %.1f, %.1f / %.1f | %s | %.2f / %s | %d in %.0f s | %.0f MiB (%d), %.0f MiB | %.2f s / %.2f s |\n",
			r.Services, r.Clusters, limit(r), strings.TrimSuffix(r.Date, "Z"), r.Load+orBlank(", ", r.Binary),
			r.ConvergeS, r.ConvergeWrites, floor,
			r.PropagationP50, r.PropagationP99, r.FloorP50, r.FloorP99, r.FanOutP50, r.FanOutP99, busyFigures(r),
			r.WritesPerChange, orDash(r.BusyWritesPerChange, r.BusyRate > 0),
			r.IdleWrites, r.IdleSeconds, r.PeakRSSMiB, r.CachedEndpoints, r.InformerFloorRSSMiB, r.StatusS, r.StatusFloorS)
	}
	return s.String()
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func busyCell(r *Results, busy float64) string {
	if r.BusyRate == 0 || r.BusyError != "" {
		return "-"
	}
	return fmt.Sprintf("%.2fx %s", busy, mark(busy <= 2))
}

func busyP99Cell(r *Results) string {
	if r.BusyRate == 0 || r.BusyError != "" {
		return "-"
	}
	return fmt.Sprintf("%.2f s %s", r.BusyP99/1000, mark(r.BusyP99 <= 1000))
}

func busyFigures(r *Results) string {
	if r.BusyError != "" {
		return "failed: " + r.BusyError
	}
	if r.BusyRate == 0 {
		return "-"
	}
	out := fmt.Sprintf("%.1f / %.1f ms, %.1f / %.1f (%.0f changes/s, sync wrote %.0f/s; %d samples)", r.BusyP50, r.BusyP99, r.BusyFloorP50, r.BusyFloorP99, r.BusyRate, r.BusyWritesPerS, r.BusySamples)
	if b := r.BusyBed; b != nil {
		out += fmt.Sprintf("; the bed carried %.0f changes/s, %.0f writes/s (change to last copy %.0f / %.0f ms)", b.ChangesPerS, b.WritesPerS, b.LagP50, b.LagP99)
	}
	return out
}

// orBlank is prefix+v, or "" when v is.
func orBlank(prefix, v string) string {
	if v == "" {
		return ""
	}
	return prefix + v
}

// ratioOrDash is v/floor, or "-" for a run from before that floor was measured.
func ratioOrDash(v, floor float64) string {
	if floor == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", ratio(v, floor))
}

func orDash(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// withinLimit is the peak RSS against the generated Deployment's memory limit.
func withinLimit(r *Results) string {
	if r.DeploymentMemoryLimitMiB == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f / %.0f MiB %s", r.PeakRSSMiB, r.DeploymentMemoryLimitMiB, mark(r.PeakRSSMiB <= r.DeploymentMemoryLimitMiB))
}
