package main

import (
	"fmt"
	"os"
	"strings"
)

const (
	beginMark = "<!-- bench:begin (written by make bench) -->"
	endMark   = "<!-- bench:end -->"
)

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// markdownTable renders the results with each figure next to its floor and target.
func markdownTable(r *Results) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Run of %s: %d services exported from 2 of %d clusters, %d propagation samples; %s.\n\n",
		r.Date, r.Services, r.Clusters, r.Samples, r.Machine)
	s.WriteString("| figure | kubectl mcs | floor, same run | ratio | target | |\n|---|---|---|---|---|---|\n")
	p50, p99, conv := ratio(r.PropagationP50, r.FloorP50), ratio(r.PropagationP99, r.FloorP99), ratio(r.ConvergeS, r.ConvergeFloorS)
	fmt.Fprintf(&s, "| propagation p50 | %.1f ms | %.1f ms | %.2fx | ≤ 1.5x | %s |\n", r.PropagationP50, r.FloorP50, p50, verdict(p50 <= 1.5))
	fmt.Fprintf(&s, "| propagation p99 | %.1f ms | %.1f ms | %.2fx | ≤ 3x | %s |\n", r.PropagationP99, r.FloorP99, p99, verdict(p99 <= 3))
	fmt.Fprintf(&s, "| converge from cold start | %.1f s (%d writes) | %.1f s | %.2fx | ≤ 2x | %s |\n", r.ConvergeS, r.ConvergeWrites, r.ConvergeFloorS, conv, verdict(conv <= 2))
	fmt.Fprintf(&s, "| API writes per source change | %.2f | | | ≤ %d (one per importing cluster) | %s |\n", r.WritesPerChange, r.ImportingClusters, verdict(r.WritesPerChange <= float64(r.ImportingClusters)))
	fmt.Fprintf(&s, "| API writes while idle | %d in %.0f s | | | 0 | %s |\n", r.IdleWrites, r.IdleSeconds, verdict(r.IdleWrites == 0))
	fmt.Fprintf(&s, "| peak RSS of the sync process | %.0f MiB | | | | |\n", r.PeakRSSMiB)
	if r.StatusServices > 0 {
		fmt.Fprintf(&s, "| `status -A`, %d services, whole process | %.2f s | %.2f s (bare lists) | %.2fx | < 2 s | %s |\n",
			r.StatusServices, r.StatusS, r.StatusFloorS, ratio(r.StatusS, r.StatusFloorS), verdict(r.StatusS < 2))
	}
	if r.DiagnoseS > 0 {
		fmt.Fprintf(&s, "| `diagnose -A`, %d services (%d results, %d failed), whole process | %.2f s | %.2f s (bare lists) | %.2fx | < 2 s | %s |\n",
			r.StatusServices, r.DiagnoseChecks, r.DiagnoseFailed, r.DiagnoseS, r.DiagnoseFloorS, ratio(r.DiagnoseS, r.DiagnoseFloorS), verdict(r.DiagnoseS < 2))
	}
	if r.SliceFloorP50 > 0 && r.FanOutP50 > 0 {
		fmt.Fprintf(&s, "\nWhere the idle propagation time goes (p50, same run): the two-hop floor of ConfigMaps %.1f ms; "+
			"the same two hops as EndpointSlices, the second written as sync writes its copies (a merge patch), %.1f ms (%.2fx; by server-side apply instead, %.1f ms); "+
			"that copy written in every cluster at once, as sync must (the fan-out floor), %.1f ms (%.2fx); sync %.1f ms (%.2fx of the fan-out floor).\n",
			r.FloorP50, r.SliceFloorP50, ratio(r.SliceFloorP50, r.FloorP50), r.ApplyFloorP50, r.FanOutP50, ratio(r.FanOutP50, r.FloorP50),
			r.PropagationP50, ratio(r.PropagationP50, r.FanOutP50))
	}
	return s.String()
}

// rewriteSection replaces the generated part of path (between the marks), appending it when the
// file has none yet.
func rewriteSection(path, beginMark, endMark, table string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(data)
	section := beginMark + "\n" + table + endMark
	i, j := strings.Index(text, beginMark), strings.Index(text, endMark)
	if i >= 0 && j > i {
		text = text[:i] + section + text[j+len(endMark):]
	} else {
		text += "\n" + section + "\n"
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
