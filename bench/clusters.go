package main

// make bench-clusters: the curve in members at a fixed number of services, rendered into its
// section of BENCHMARKS.md and a plot (clusters_svg.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	clustersBeginMark = "<!-- bench-clusters:begin (written by make bench-clusters) -->"
	clustersEndMark   = "<!-- bench-clusters:end -->"
	// clustersSVG is the plot, committed beside the other pictures of the benchmarks.
	clustersSVG = outDir + "/clusters.svg"
)

// series is one curve: runs of one binary in one mode at one number of services and endpoints
// per slice, the latest run per number of members, in order of members.
type series struct {
	binary              string
	mode                syncMode
	services, endpoints int
	runs                []*Results
}

func (s *series) name() string {
	mode := ""
	if s.mode == modePerMember {
		mode = fmt.Sprintf(", per-member (%s's sync)", orDefault(s.runs[0].Measured, "member1"))
	}
	return fmt.Sprintf("%s%s, %d services, %d endpoints/slice", orDefault(s.binary, "?"), mode, s.services, s.endpoints)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// modeOf is the mode a results file was run in (files from before modes: host).
func modeOf(r *Results) syncMode {
	m, err := parseMode(r.Mode)
	if err != nil {
		return syncMode(r.Mode)
	}
	return m
}

// clusterSeries groups the runs into series, the latest run of each size kept, series ordered
// by services, endpoints, mode (host first) and the date of their first run (earlier builds
// first).
func clusterSeries(runs []*Results) []*series {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Date < runs[j].Date })
	by := map[string]*series{}
	var out []*series
	for _, r := range runs {
		eps := max(r.EndpointsPerSlice, 2)
		key := fmt.Sprintf("%s/%s/%d/%d", r.Binary, modeOf(r), r.Services, eps)
		s := by[key]
		if s == nil {
			s = &series{binary: r.Binary, mode: modeOf(r), services: r.Services, endpoints: eps}
			by[key] = s
			out = append(out, s)
		}
		replaced := false
		for i, o := range s.runs {
			if o.Clusters == r.Clusters {
				s.runs[i], replaced = r, true
			}
		}
		if !replaced {
			s.runs = append(s.runs, r)
		}
	}
	for _, s := range out {
		sort.Slice(s.runs, func(i, j int) bool { return s.runs[i].Clusters < s.runs[j].Clusters })
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].services != out[j].services {
			return out[i].services < out[j].services
		}
		if out[i].endpoints != out[j].endpoints {
			return out[i].endpoints < out[j].endpoints
		}
		return out[i].mode == modeHost && out[j].mode != modeHost
	})
	return out
}

// perMemberAdded is the slope of sync's peak RSS from the run before (same series), in MiB.
func perMemberAdded(s *series, i int) (float64, bool) {
	if i == 0 {
		return 0, false
	}
	a, b := s.runs[i-1], s.runs[i]
	return (b.PeakRSSMiB - a.PeakRSSMiB) / float64(b.Clusters-a.Clusters), true
}

// syncCPU is the measured sync's CPU seconds (host mode's one; per-member mode's first member's).
func syncCPU(u *CPUUse) float64 {
	if u == nil {
		return 0
	}
	return u.ByProgram["sync"]
}

// allSyncsCPU is every sync's CPU seconds: the measured one's and, in per-member mode, the others'.
func allSyncsCPU(u *CPUUse) float64 {
	if u == nil {
		return 0
	}
	return u.ByProgram["sync"] + u.ByProgram[otherSyncs]
}

// perChange is the measured sync's CPU seconds per idle endpoint change (0: not measured).
func perChange(r *Results) float64 {
	if r.Samples == 0 {
		return 0
	}
	return r.PropagationSyncCPUS / float64(r.Samples)
}

// allPerChange is every sync's CPU seconds per idle endpoint change (files from before modes
// measured one process: their measured figure).
func allPerChange(r *Results) float64 {
	if r.Samples == 0 {
		return 0
	}
	return orZero(r.PropagationSyncsCPUS, r.PropagationSyncCPUS) / float64(r.Samples)
}

// allPeakRSS is the sum of every sync's peak RSS (files from before modes: the one's).
func allPeakRSS(r *Results) float64 { return orZero(r.SyncsPeakRSSMiB, r.PeakRSSMiB) }

func orZero(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// hostRun is the host-mode run that a per-member run is set against: the same services, endpoints
// per slice and members, of the same binary when there is one, else the latest.
func hostRun(ss []*series, r *Results) *Results {
	var found *Results
	for _, s := range ss {
		if s.mode != modeHost || s.services != r.Services || s.endpoints != max(r.EndpointsPerSlice, 2) {
			continue
		}
		for _, h := range s.runs {
			if h.Clusters != r.Clusters {
				continue
			}
			if h.Binary == r.Binary {
				return h
			}
			if found == nil || h.Date > found.Date {
				found = h
			}
		}
	}
	return found
}

func renderClusters(paths []string, markdown, svg string) error {
	runs, err := readResults(paths)
	if err != nil {
		return err
	}
	ss := clusterSeries(runs)
	table := clustersTable(ss, svg, markdown)
	fmt.Println(table)
	if err := os.MkdirAll(filepath.Dir(svg), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(svg, []byte(clustersPlot(ss)), 0o644); err != nil {
		return err
	}
	model := clustersModel(ss)
	fmt.Println(model)
	if markdown == "" {
		return nil
	}
	if err := rewriteSection(markdown, clustersBeginMark, clustersEndMark, table); err != nil {
		return err
	}
	return rewriteSection(markdown, modelBeginMark, modelEndMark, model)
}

// clustersTable is the section: one row per run kept (the latest of each binary, mode, services,
// endpoints per slice and members), host mode's table, per-member mode's under it, the plot last.
func clustersTable(ss []*series, svg, markdown string) string {
	var s strings.Builder
	s.WriteString("Each run: the services exported from member1 and member2, imported by every member; light members (an apiserver and etcd each); " +
		"floors from the same run. Targets: RSS per member added ≤ 4 MiB, the same within 20% at 2 and 50 endpoints per slice; " +
		"at 40 members converge ≤ 1.5x the replay floor and idle p50 ≤ 1.5x the fan-out floor; writes per endpoint change = importing members; 0 idle writes.\n\n")
	s.WriteString("| binary | services × endpoints/slice | members | run (UTC), load | sync peak RSS (per member added) | converge / replay floor | sync CPU s: converge, per change | converge writes (per s; replay floor's per s) | p50 / p99 idle / fan-out floor | writes per change (members) | idle writes | a member: apiserver + etcd RSS (empty), idle CPU; members' CPU s in converge |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	perMember := false
	for _, sr := range ss {
		if sr.mode != modeHost {
			perMember = true
			continue
		}
		for i, r := range sr.runs {
			added := "-"
			if d, ok := perMemberAdded(sr, i); ok {
				added = fmt.Sprintf("%+.1f MiB %s", d, mark(d <= 4))
			}
			conv := ratio(r.ConvergeS, r.ConvergeFloorS)
			pc := "-"
			if r.Samples > 0 && r.PropagationSyncCPUS > 0 {
				pc = fmt.Sprintf("%.3f", perChange(r))
			}
			fmt.Fprintf(&s, "| %s | %.0f MiB (%s) | %.1f s / %.1f s = %.2fx%s | %.1f, %s | %s |\n",
				runCells(sr, r), r.PeakRSSMiB, added, r.ConvergeS, r.ConvergeFloorS, conv, at40(r, conv <= 1.5), syncCPU(r.ConvergeCPU), pc, tailCells(r))
		}
	}
	if perMember {
		perMemberTable(&s, ss)
	}
	rel, err := filepath.Rel(filepath.Dir(orDefault(markdown, ".")), svg)
	if err != nil {
		rel = svg
	}
	fmt.Fprintf(&s, "\n![sync's peak RSS and converge time against members, each series one binary in one mode at one size](%s)\n", filepath.ToSlash(rel))
	return s.String()
}

// flatWithin is how much a per-member sync's CPU per endpoint change may grow over its series'
// smallest size and still count as flat in the number of members.
const flatWithin = 1.25

// perMemberTable: per-member mode's runs, the measured sync's figures judged, every sync's summed
// beside host mode's one at the same size.
func perMemberTable(s *strings.Builder, ss []*series) {
	fmt.Fprintf(s, "\n**Per-member mode**: one `sync --watch --local=MEMBER` per member, each reading every member and writing in its own. "+
		"Targets, for one member's sync (member1's: an exporter, and an importer as every member is): RSS per member added ≤ 1 MiB; "+
		"CPU per endpoint change flat in the number of members (at most %.2fx of the series' smallest size); at 40 members converge no slower than host mode's (≤ 1.00x). "+
		"Writes per change and idle writes summed over every sync, as are the CPU and peak RSS set beside host mode's one sync at the same size.\n\n", flatWithin)
	s.WriteString("| binary | services × endpoints/slice | members | run (UTC), load | one sync's peak RSS (per member added) | one sync's CPU s: converge, per change (vs smallest size) | every sync: peak RSS summed; host's | every sync: CPU s converge, per change; host's | converge / replay floor | converge / host mode's | converge writes (per s; replay floor's per s) | p50 / p99 idle / fan-out floor | writes per change (members) | idle writes | a member: apiserver + etcd RSS (empty), idle CPU; members' CPU s in converge |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sr := range ss {
		if sr.mode != modePerMember {
			continue
		}
		for i, r := range sr.runs {
			added, flat := "-", "-"
			if d, ok := perMemberAdded(sr, i); ok {
				added = fmt.Sprintf("%+.1f MiB %s", d, mark(d <= 1))
			}
			if first := perChange(sr.runs[0]); i > 0 && first > 0 {
				f := perChange(r) / first
				flat = fmt.Sprintf("%.2fx %s", f, mark(f <= flatWithin))
			}
			host, hostRSS, hostCPU, vsHost := hostRun(ss, r), "-", "-", "-"
			if host != nil {
				hostRSS = fmt.Sprintf("%.0f MiB", allPeakRSS(host))
				hostCPU = fmt.Sprintf("%.1f, %.3f", allSyncsCPU(host.ConvergeCPU), allPerChange(host))
				v := ratio(r.ConvergeS, host.ConvergeS)
				vsHost = fmt.Sprintf("%.1f s / %.1f s = %.2fx%s", r.ConvergeS, host.ConvergeS, v, at40(r, v <= 1))
			}
			fmt.Fprintf(s, "| %s | %.0f MiB (%s) | %.1f, %.4f (%s) | %.0f MiB; %s | %.1f, %.3f; %s | %.1f s / %.1f s = %.2fx | %s | %s |\n",
				runCells(sr, r), r.PeakRSSMiB, added, syncCPU(r.ConvergeCPU), perChange(r), flat,
				allPeakRSS(r), hostRSS, allSyncsCPU(r.ConvergeCPU), allPerChange(r), hostCPU,
				r.ConvergeS, r.ConvergeFloorS, ratio(r.ConvergeS, r.ConvergeFloorS), vsHost, tailCells(r))
		}
	}
}

// at40 is a judgement shown at 40 members and more only, where the targets are set.
func at40(r *Results, ok bool) string {
	if r.Clusters < 40 {
		return ""
	}
	return " " + mark(ok)
}

// runCells are a row's first cells: what ran, and when.
func runCells(sr *series, r *Results) string {
	return fmt.Sprintf("%s | %d × %d | %d | %s%s", orDefault(r.Binary, "?"), r.Services, sr.endpoints, r.Clusters,
		strings.TrimSuffix(r.Date, "Z"), orBlank(", ", r.Load))
}

// tailCells are a row's last cells, the same in both modes: writes, propagation, the members.
func tailCells(r *Results) string {
	p50 := ratio(r.PropagationP50, r.FanOutP50)
	return fmt.Sprintf("%d (%.0f/s; %.0f/s) | %.1f / %.1f ms, %.1f / %.1f = %.2fx%s | %.2f (%d) %s | %d in %.0f s %s | %s",
		r.ConvergeWrites, ratio(float64(r.ConvergeWrites), r.ConvergeS), ratio(float64(r.ConvergeWrites), r.ConvergeFloorS),
		r.PropagationP50, r.PropagationP99, r.FanOutP50, r.FanOutP99, p50, at40(r, p50 <= 1.5),
		r.WritesPerChange, r.ImportingClusters, mark(r.WritesPerChange <= float64(r.ImportingClusters)),
		r.IdleWrites, r.IdleSeconds, mark(r.IdleWrites == 0), bedCell(r.Bed))
}

func bedCell(b *BedUse) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f + %.0f MiB (%.0f + %.0f), %.1f%% of a core; %.0f", b.APIServerRSSMiB, b.EtcdRSSMiB,
		b.EmptyAPIServerRSSMiB, b.EmptyEtcdRSSMiB, b.IdleCPUPct, b.ConvergeCPUS)
}
