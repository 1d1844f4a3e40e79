package main

// The plot of make bench-clusters as a hand-written SVG: two panels sharing the x axis (members),
// sync's peak RSS on the left, converge time on the right with each series' replay floor dashed.

import (
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strings"
)

var seriesColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// linAxis maps [0, hi] onto [0, size].
type linAxis struct{ hi, size float64 }

func (a linAxis) pos(v float64) float64 { return a.size * v / a.hi }

// niceCeil is the smallest of 1, 2, 2.5, 5 times a power of ten at or above v.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

type plotPanel struct {
	title, yLabel string
	value, floor  func(*Results) float64 // floor nil: none
}

func clustersPlot(ss []*series) string {
	panels := []plotPanel{
		{title: "sync's peak RSS", yLabel: "MiB", value: func(r *Results) float64 { return r.PeakRSSMiB }},
		{title: "converge (dashed: replay floor)", yLabel: "seconds", value: func(r *Results) float64 { return r.ConvergeS },
			floor: func(r *Results) float64 { return r.ConvergeFloorS }},
	}
	xMax, sizes := 0, map[int]bool{0: true}
	for _, s := range ss {
		for _, r := range s.runs {
			xMax, sizes[r.Clusters] = max(xMax, r.Clusters), true
		}
	}
	ax := linAxis{hi: niceCeil(1.1 * float64(max(xMax, 5))), size: panelW}
	legend := legendH + 18*float64(len(ss))
	width, height := 2*cellW, legend+marginT/2+cellH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" %s>`+"\n", width, height, width, height, fontAttrs)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="18" font-size="14" font-weight="bold">sync against members (make bench-clusters)</text>`+"\n", marginL)
	for i, s := range ss {
		y := legendH + 18*float64(i)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`, marginL, y, marginL+24, y, seriesColors[i%len(seriesColors)])
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", marginL+30, y+4, html.EscapeString(s.name()))
	}
	for pi, p := range panels {
		yMax := 0.0
		for _, s := range ss {
			for _, r := range s.runs {
				yMax = math.Max(yMax, p.value(r))
				if p.floor != nil {
					yMax = math.Max(yMax, p.floor(r))
				}
			}
		}
		ay := linAxis{hi: niceCeil(yMax), size: panelH}
		fmt.Fprintf(&b, `<g transform="translate(%.1f,%.1f)">`+"\n", float64(pi)*cellW+marginL, legend+marginT/2+marginT)
		fmt.Fprintf(&b, `<text x="0" y="-10" font-weight="bold">%s</text>`+"\n", html.EscapeString(p.title))
		for q := 0; q <= 4; q++ {
			v := ay.hi * float64(q) / 4
			y := panelH - ay.pos(v)
			fmt.Fprintf(&b, `<line x1="0" y1="%.1f" x2="%.0f" y2="%.1f" %s/><text x="-6" y="%.1f" text-anchor="end">%g</text>`+"\n", y, panelW, y, gridStroke, y+4, v)
		}
		for _, n := range slices.Sorted(maps.Keys(sizes)) { // a grid line at each size measured
			x := ax.pos(float64(n))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="0" x2="%.1f" y2="%.0f" %s/><text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x, x, panelH, gridStroke, x, panelH+16, n)
		}
		fmt.Fprintf(&b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", panelW, panelH)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">members</text>`+"\n", panelW/2, panelH+34)
		fmt.Fprintf(&b, `<text transform="translate(-40,%.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", panelH/2, p.yLabel)
		for i, s := range ss {
			color := seriesColors[i%len(seriesColors)]
			line := func(f func(*Results) float64, dash string) {
				var pts []string
				for _, r := range s.runs {
					x, y := ax.pos(float64(r.Clusters)), panelH-ay.pos(f(r))
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%d members: %.1f</title></circle>`+"\n", x, y, color, r.Clusters, f(r))
				}
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.0f"%s points="%s"/>`+"\n", color, curveStrokeW, dash, strings.Join(pts, " "))
			}
			line(p.value, "")
			if p.floor != nil {
				line(p.floor, ` stroke-dasharray="5,4"`)
			}
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}
