package main

// The latency CDF of bench -karmada as a hand-written SVG: one panel per run (size and load),
// one step curve per path, x the latency in ms on a log scale, y the fraction of samples.

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"
)

type cdfSeries struct {
	Name, Color string
	Samples     []float64 // ms
}

type cdfPanel struct {
	Title  string
	Series []cdfSeries
}

// cdf returns the samples sorted and, for each, the fraction of samples at or below it.
func cdf(samples []float64) (xs, ys []float64) {
	xs = append([]float64(nil), samples...)
	sort.Float64s(xs)
	ys = make([]float64, len(xs))
	for i := range xs {
		ys[i] = float64(i+1) / float64(len(xs))
	}
	return xs, ys
}

// logAxis maps [lo, hi] (whole decades) onto [0, width].
type logAxis struct{ lo, hi, width float64 }

// decades is the smallest range of whole decades holding every positive sample (1-1000 ms when
// there is none).
func decades(panels []cdfPanel) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		for _, s := range p.Series {
			for _, v := range s.Samples {
				if v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 1, 1000
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// pos is where v falls; values outside the range stay on its edges.
func (a logAxis) pos(v float64) float64 {
	v = math.Min(math.Max(v, a.lo), a.hi)
	return a.width * math.Log10(v/a.lo) / math.Log10(a.hi/a.lo)
}

// Layout of the picture, in SVG user units.
const (
	panelW, panelH           = 380.0, 220.0 // the plot area of one panel
	marginL, marginT         = 56.0, 40.0   // around each plot area: axis labels, the title
	marginR, marginB         = 16.0, 44.0
	cdfColumns               = 2
	legendH                  = 28.0
	cellW, cellH             = marginL + panelW + marginR, marginT + panelH + marginB
	fontAttrs                = `font-family="sans-serif" font-size="12"`
	gridStroke, curveStrokeW = `stroke="#ddd" stroke-width="1"`, 2.0
)

// writeCDF writes the panels as one SVG: a legend of the series of the first panel, then the
// panels in rows of cdfColumns, sharing one x range.
func writeCDF(w io.Writer, title string, panels []cdfPanel) error {
	rows := (len(panels) + cdfColumns - 1) / cdfColumns
	width := cdfColumns * cellW
	height := legendH + marginT/2 + float64(rows)*cellH
	lo, hi := decades(panels)
	ax := logAxis{lo: lo, hi: hi, width: panelW}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" %s>`+"\n", width, height, width, height, fontAttrs)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&s, `<text x="%.0f" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", marginL, html.EscapeString(title))
	if len(panels) > 0 {
		x := marginL
		for _, sr := range panels[0].Series {
			fmt.Fprintf(&s, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`, x, legendH+8, x+24, legendH+8, sr.Color)
			fmt.Fprintf(&s, `<text x="%.0f" y="%.0f">%s</text>`+"\n", x+30, legendH+12, html.EscapeString(sr.Name))
			x += 60 + 7*float64(len(sr.Name))
		}
	}
	for i, p := range panels {
		ox := float64(i%cdfColumns)*cellW + marginL
		oy := legendH + marginT/2 + float64(i/cdfColumns)*cellH + marginT
		writePanel(&s, p, ax, ox, oy)
	}
	s.WriteString("</svg>\n")
	_, err := io.WriteString(w, s.String())
	return err
}

// writePanel draws one plot area with its top-left corner at (ox, oy).
func writePanel(s *strings.Builder, p cdfPanel, ax logAxis, ox, oy float64) {
	fmt.Fprintf(s, `<g transform="translate(%.1f,%.1f)">`+"\n", ox, oy)
	fmt.Fprintf(s, `<text x="0" y="-10" font-weight="bold">%s</text>`+"\n", html.EscapeString(p.Title))
	// Grid: every decade labelled, 2x and 5x faint; y in quarters.
	for d := ax.lo; d <= ax.hi*1.0001; d *= 10 {
		x := ax.pos(d)
		fmt.Fprintf(s, `<line x1="%.1f" y1="0" x2="%.1f" y2="%.0f" %s/>`, x, x, panelH, gridStroke)
		fmt.Fprintf(s, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x, panelH+16, msLabel(d))
		for _, m := range []float64{2, 5} {
			if d*m < ax.hi {
				xm := ax.pos(d * m)
				fmt.Fprintf(s, `<line x1="%.1f" y1="0" x2="%.1f" y2="%.0f" stroke="#f0f0f0" stroke-width="1"/>`+"\n", xm, xm, panelH)
			}
		}
	}
	for q := 0; q <= 4; q++ {
		y := panelH - panelH*float64(q)/4
		fmt.Fprintf(s, `<line x1="0" y1="%.1f" x2="%.0f" y2="%.1f" %s/>`, y, panelW, y, gridStroke)
		fmt.Fprintf(s, `<text x="-6" y="%.1f" text-anchor="end">%.2f</text>`+"\n", y+4, float64(q)/4)
	}
	fmt.Fprintf(s, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", panelW, panelH)
	fmt.Fprintf(s, `<text x="%.0f" y="%.0f" text-anchor="middle">latency, ms (log scale)</text>`+"\n", panelW/2, panelH+34)
	fmt.Fprintf(s, `<text transform="translate(-40,%.0f) rotate(-90)" text-anchor="middle">fraction of samples</text>`+"\n", panelH/2)
	for _, sr := range p.Series {
		if pts := stepPoints(sr.Samples, ax); pts != "" {
			fmt.Fprintf(s, `<polyline fill="none" stroke="%s" stroke-width="%.0f" points="%s"><title>%s</title></polyline>`+"\n",
				sr.Color, curveStrokeW, pts, html.EscapeString(sr.Name))
		}
	}
	s.WriteString("</g>\n")
}

// stepPoints is the empirical CDF as a staircase: at each sample the curve rises from the
// fraction below it to the fraction at or below it.
func stepPoints(samples []float64, ax logAxis) string {
	xs, ys := cdf(samples)
	var b strings.Builder
	prev := 0.0
	for i, v := range xs {
		x := ax.pos(v)
		fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", x, panelH*(1-prev), x, panelH*(1-ys[i]))
		prev = ys[i]
	}
	return strings.TrimSpace(b.String())
}

func msLabel(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.0f", v)
}
