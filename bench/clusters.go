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

// series is one curve: runs of one binary at one number of services and endpoints per slice,
// the latest run per number of members, in order of members.
type series struct {
	binary              string
	services, endpoints int
	runs                []*Results
}

func (s *series) name() string {
	return fmt.Sprintf("%s, %d services, %d endpoints/slice", orDefault(s.binary, "?"), s.services, s.endpoints)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// clusterSeries groups the runs into series, the latest run of each size kept, series ordered
// by services, endpoints and the date of their first run (earlier builds first).
func clusterSeries(runs []*Results) []*series {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Date < runs[j].Date })
	by := map[string]*series{}
	var out []*series
	for _, r := range runs {
		eps := max(r.EndpointsPerSlice, 2)
		key := fmt.Sprintf("%s/%d/%d", r.Binary, r.Services, eps)
		s := by[key]
		if s == nil {
			s = &series{binary: r.Binary, services: r.Services, endpoints: eps}
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
		return out[i].endpoints < out[j].endpoints
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

func syncCPU(u *CPUUse) float64 {
	if u == nil {
		return 0
	}
	return u.ByProgram["sync"]
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
	if markdown == "" {
		return nil
	}
	return rewriteSection(markdown, clustersBeginMark, clustersEndMark, table)
}

// clustersTable is the section: one row per run kept (the latest of each binary, services,
// endpoints per slice and members), the plot under it.
func clustersTable(ss []*series, svg, markdown string) string {
	var s strings.Builder
	s.WriteString("Each run: the services exported from member1 and member2, imported by every member; light members (an apiserver and etcd each); " +
		"floors from the same run. Targets: RSS per member added ≤ 4 MiB, the same within 20% at 2 and 50 endpoints per slice; " +
		"at 40 members converge ≤ 1.5x the replay floor and idle p50 ≤ 1.5x the fan-out floor; writes per endpoint change = importing members; 0 idle writes.\n\n")
	s.WriteString("| binary | services × endpoints/slice | members | run (UTC), load | sync peak RSS (per member added) | converge / replay floor | sync CPU s: converge, per change | converge writes (per s; replay floor's per s) | p50 / p99 idle / fan-out floor | writes per change (members) | idle writes | a member: apiserver + etcd RSS (empty), idle CPU; members' CPU s in converge |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sr := range ss {
		for i, r := range sr.runs {
			added := "-"
			if d, ok := perMemberAdded(sr, i); ok {
				added = fmt.Sprintf("%+.1f MiB %s", d, mark(d <= 4))
			}
			conv, p50 := ratio(r.ConvergeS, r.ConvergeFloorS), ratio(r.PropagationP50, r.FanOutP50)
			at40 := func(ok bool) string {
				if r.Clusters < 40 {
					return ""
				}
				return " " + mark(ok)
			}
			perChange := "-"
			if r.Samples > 0 && r.PropagationSyncCPUS > 0 {
				perChange = fmt.Sprintf("%.3f", r.PropagationSyncCPUS/float64(r.Samples))
			}
			fmt.Fprintf(&s, "| %s | %d × %d | %d | %s%s | %.0f MiB (%s) | %.1f s / %.1f s = %.2fx%s | %.1f, %s | %d (%.0f/s; %.0f/s) | %.1f / %.1f ms, %.1f / %.1f = %.2fx%s | %.2f (%d) %s | %d in %.0f s %s | %s |\n",
				orDefault(r.Binary, "?"), r.Services, sr.endpoints, r.Clusters, strings.TrimSuffix(r.Date, "Z"), orBlank(", ", r.Load),
				r.PeakRSSMiB, added, r.ConvergeS, r.ConvergeFloorS, conv, at40(conv <= 1.5), syncCPU(r.ConvergeCPU), perChange,
				r.ConvergeWrites, ratio(float64(r.ConvergeWrites), r.ConvergeS), ratio(float64(r.ConvergeWrites), r.ConvergeFloorS),
				r.PropagationP50, r.PropagationP99, r.FanOutP50, r.FanOutP99, p50, at40(p50 <= 1.5),
				r.WritesPerChange, r.ImportingClusters, mark(r.WritesPerChange <= float64(r.ImportingClusters)),
				r.IdleWrites, r.IdleSeconds, mark(r.IdleWrites == 0), bedCell(r.Bed))
		}
	}
	rel, err := filepath.Rel(filepath.Dir(orDefault(markdown, ".")), svg)
	if err != nil {
		rel = svg
	}
	fmt.Fprintf(&s, "\n![sync's peak RSS and converge time against members, each series one binary at one size](%s)\n", filepath.ToSlash(rel))
	return s.String()
}

func bedCell(b *BedUse) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f + %.0f MiB (%.0f + %.0f), %.1f%% of a core; %.0f", b.APIServerRSSMiB, b.EtcdRSSMiB,
		b.EmptyAPIServerRSSMiB, b.EmptyEtcdRSSMiB, b.IdleCPUPct, b.ConvergeCPUS)
}
