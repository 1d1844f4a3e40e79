package main

// The 255-member model of BENCHMARKS.md ("Past this machine"), one column per mode: each figure
// of the latest host-mode and per-member series of a size fitted by a straight line in the number
// of members and read at 255.

import (
	"fmt"
	"math"
	"strings"
)

const (
	modelBeginMark = "<!-- bench-clusters-model:begin (written by make bench-clusters) -->"
	modelEndMark   = "<!-- bench-clusters-model:end -->"
	// modelMembers is the model's clusterset: Cilium ClusterMesh's design point.
	modelMembers = 255
)

// line is a least-squares straight line, y = at0 + slope × members.
type line struct{ at0, slope float64 }

func (l line) at(members float64) float64 { return l.at0 + l.slope*members }

// fitLine fits ys against xs (one point: a flat line through it; none: zero).
func fitLine(xs, ys []float64) line {
	n := float64(len(xs))
	if n == 0 {
		return line{}
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return line{at0: sy / n}
	}
	slope := (n*sxy - sx*sy) / d
	return line{at0: (sy - slope*sx) / n, slope: slope}
}

// fitRuns fits f over a series' runs against their members.
func fitRuns(s *series, f func(*Results) float64) line {
	var xs, ys []float64
	for _, r := range s.runs {
		xs, ys = append(xs, float64(r.Clusters)), append(ys, f(r))
	}
	return fitLine(xs, ys)
}

// modelFigure is one row of the model: how a figure is read from a run, for the one sync measured
// (host mode's, or one member's) and for every sync of the run, each as a number of units.
type modelFigure struct {
	name, unit, format string
	one, all           func(*Results) float64
}

var modelFigures = []modelFigure{
	{"peak RSS", "MiB", "%.0f", func(r *Results) float64 { return r.PeakRSSMiB }, allPeakRSS},
	{"CPU to converge", "CPU s", "%.0f", func(r *Results) float64 { return syncCPU(r.ConvergeCPU) }, func(r *Results) float64 { return allSyncsCPU(r.ConvergeCPU) }},
	{"CPU per endpoint change", "CPU s", "%.3f", perChange, allPerChange},
	{"writes per endpoint change", "", "%.1f", nil, func(r *Results) float64 { return r.WritesPerChange }},
}

// amount is v in the figure's unit, large memory in GiB and large CPU in hours too.
func (f modelFigure) amount(v float64) string {
	switch {
	case f.unit == "MiB" && v >= 1024:
		return fmt.Sprintf("%.1f GiB", v/1024)
	case f.unit == "CPU s" && v >= 3600:
		return fmt.Sprintf("%.0f CPU s (%.1f h)", v, v/3600)
	}
	return fmt.Sprintf(f.format+"%s", v, orBlank(" ", f.unit))
}

// slope is a change per member added, in the figure's unit.
func (f modelFigure) slope(v float64) string {
	format := "%+.3g"
	if math.Abs(v) >= 100 {
		format = "%+.0f"
	}
	return fmt.Sprintf(format+"%s", v, orBlank(" ", f.unit))
}

// modelColumns are a figure's three cells at m members: host mode's one sync; one member's sync in
// per-member mode (its figure's line); and every member's sync, m times the line of the mean sync
// (every sync's figure over the members, per run). Each says its slope per member added.
func modelColumns(f modelFigure, host, pm *series, m float64) [3]string {
	cell := func(v, slope float64) string {
		return fmt.Sprintf("%s (%s a member)", f.amount(v), f.slope(slope))
	}
	var out [3]string
	h := fitRuns(host, f.all) // host mode: its one sync is every sync
	out[0] = cell(h.at(m), h.slope)
	if f.one != nil {
		o := fitRuns(pm, f.one)
		out[1] = cell(o.at(m), o.slope)
	} else { // a count per member: one member's share
		o := fitRuns(pm, func(r *Results) float64 { return f.all(r) / float64(r.Clusters) })
		out[1] = cell(o.at(m), o.slope)
	}
	mean := fitRuns(pm, func(r *Results) float64 { return f.all(r) / float64(r.Clusters) })
	out[2] = cell(m*mean.at(m), mean.at0+2*mean.slope*m) // d/dm of m × (a + b m)
	return out
}

// latestSeries is, of the series of one mode, services and endpoints with two sizes at least, the
// one whose last run is the latest.
func latestSeries(ss []*series, mode syncMode, services, endpoints int) *series {
	var out *series
	for _, s := range ss {
		if s.mode != mode || s.services != services || s.endpoints != endpoints || len(s.runs) < 2 {
			continue
		}
		if out == nil || s.runs[len(s.runs)-1].Date > out.runs[len(out.runs)-1].Date {
			out = s
		}
	}
	return out
}

// clustersModel is the model's tables: one per size measured in both modes at two sizes or more.
func clustersModel(ss []*series) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each figure of the latest host-mode and per-member series at a size, fitted by least squares as a straight line in the members "+
		"over the sizes measured and read at %d members; in brackets its slope there, per member added. Host mode: its one sync. "+
		"Per-member: one member's sync (member1's) on its line; every member's, %d times the line of their mean (every sync's figure over the members, per run), "+
		"so the sum grows with the members squared where the mean grows with them. Writes per change are every sync's (one member's: its share).\n", modelMembers, modelMembers)
	done := map[[2]int]bool{}
	for _, s := range ss {
		k := [2]int{s.services, s.endpoints}
		host, pm := latestSeries(ss, modeHost, k[0], k[1]), latestSeries(ss, modePerMember, k[0], k[1])
		if done[k] || host == nil || pm == nil {
			continue
		}
		done[k] = true
		fmt.Fprintf(&b, "\n**%d services × %d endpoints/slice** (host: %s at %s members; per-member: %s at %s members)\n\n",
			k[0], k[1], orDefault(host.binary, "?"), sizes(host), orDefault(pm.binary, "?"), sizes(pm))
		fmt.Fprintf(&b, "| at %d members | host mode: its sync | per-member: one member's sync | per-member: all %d syncs |\n|---|---|---|---|\n", modelMembers, modelMembers)
		for _, f := range modelFigures {
			c := modelColumns(f, host, pm, modelMembers)
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.name, c[0], c[1], c[2])
		}
	}
	if len(done) == 0 {
		b.WriteString("\nNo size measured yet in both modes at two numbers of members or more.\n")
	}
	return b.String()
}

func sizes(s *series) string {
	var out []string
	for _, r := range s.runs {
		out = append(out, fmt.Sprint(r.Clusters))
	}
	return strings.Join(out, ", ")
}
