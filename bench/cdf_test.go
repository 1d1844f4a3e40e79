package main

import (
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCDF(t *testing.T) {
	xs, ys := cdf([]float64{30, 10, 20, 10})
	wantX, wantY := []float64{10, 10, 20, 30}, []float64{0.25, 0.5, 0.75, 1}
	for i := range wantX {
		if xs[i] != wantX[i] || ys[i] != wantY[i] {
			t.Fatalf("cdf = %v, %v; want %v, %v", xs, ys, wantX, wantY)
		}
	}
	if xs, ys := cdf(nil); len(xs) != 0 || len(ys) != 0 {
		t.Errorf("cdf(nil) = %v, %v", xs, ys)
	}
}

func TestDecadesAndLogAxis(t *testing.T) {
	lo, hi := decades([]cdfPanel{{Series: []cdfSeries{{Samples: []float64{12, 0, 950}}}}, {Series: []cdfSeries{{Samples: []float64{3.5}}}}})
	if lo != 1 || hi != 1000 {
		t.Errorf("decades = %v-%v, want 1-1000", lo, hi)
	}
	if lo, hi := decades(nil); lo != 1 || hi != 1000 {
		t.Errorf("decades of nothing = %v-%v, want 1-1000", lo, hi)
	}
	if lo, hi := decades([]cdfPanel{{Series: []cdfSeries{{Samples: []float64{100}}}}}); lo != 100 || hi != 1000 {
		t.Errorf("decades of one sample on a decade = %v-%v, want 100-1000", lo, hi)
	}
	a := logAxis{lo: 1, hi: 1000, width: 300}
	for v, want := range map[float64]float64{1: 0, 10: 100, 100: 200, 1000: 300, 0: 0, 5000: 300} {
		if got := a.pos(v); math.Abs(got-want) > 1e-9 {
			t.Errorf("pos(%v) = %v, want %v", v, got, want)
		}
	}
}

// svgDoc is what the test reads back from the picture.
type svgDoc struct {
	Texts     []string
	Polylines []polyline
}

type polyline struct {
	Stroke, Title string
	Points        [][2]float64
}

func parseSVG(t *testing.T, data string) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(strings.NewReader(data))
	var inText, inTitle bool
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "text":
				inText = true
			case "title":
				inTitle = true
			case "polyline":
				p := polyline{}
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "stroke":
						p.Stroke = a.Value
					case "points":
						for _, xy := range strings.Fields(a.Value) {
							x, y, _ := strings.Cut(xy, ",")
							fx, err1 := strconv.ParseFloat(x, 64)
							fy, err2 := strconv.ParseFloat(y, 64)
							if err1 != nil || err2 != nil {
								t.Fatalf("point %q", xy)
							}
							p.Points = append(p.Points, [2]float64{fx, fy})
						}
					}
				}
				doc.Polylines = append(doc.Polylines, p)
			}
		case xml.EndElement:
			inText, inTitle = false, false
		case xml.CharData:
			switch {
			case inText:
				doc.Texts = append(doc.Texts, string(e))
			case inTitle:
				doc.Polylines[len(doc.Polylines)-1].Title = string(e)
			}
		}
	}
	return doc
}

func TestWriteCDF(t *testing.T) {
	panels := []cdfPanel{
		{Title: "100 services, idle", Series: []cdfSeries{
			{Name: "kubectl mcs sync", Color: "#1f77b4", Samples: []float64{10, 20, 30, 40}},
			{Name: "Karmada <MCS>", Color: "#d62728", Samples: []float64{100, 400}},
			{Name: "two-hop floor", Color: "#7f7f7f", Samples: []float64{8}},
		}},
		{Title: "100 services, churn", Series: []cdfSeries{
			{Name: "kubectl mcs sync", Color: "#1f77b4", Samples: []float64{15}},
			{Name: "Karmada <MCS>", Color: "#d62728"}, // no samples: no curve
			{Name: "two-hop floor", Color: "#7f7f7f", Samples: []float64{9}},
		}},
	}
	var b strings.Builder
	if err := writeCDF(&b, "Propagation latency", panels); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, b.String())
	if len(doc.Polylines) != 5 {
		t.Fatalf("%d curves, want 5 (one per series with samples)", len(doc.Polylines))
	}
	all := strings.Join(doc.Texts, "|")
	for _, want := range []string{"Propagation latency", "100 services, idle", "100 services, churn", "kubectl mcs sync", "Karmada <MCS>", "two-hop floor", "latency, ms (log scale)", "1|", "10|", "100|", "1000", "0.50"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in %q", want, all)
		}
	}
	// The sync curve of the first panel: 4 samples, 2 points each, rising from y=panelH
	// (fraction 0) to y=0 (fraction 1), x never decreasing, at the samples' places on the axis.
	ax := logAxis{lo: 1, hi: 1000, width: panelW}
	sync := doc.Polylines[0]
	if sync.Title != "kubectl mcs sync" || sync.Stroke != "#1f77b4" || len(sync.Points) != 8 {
		t.Fatalf("first curve %+v", sync)
	}
	if first, last := sync.Points[0], sync.Points[7]; first[1] != panelH || last[1] != 0 {
		t.Errorf("curve from y=%v to y=%v, want %v to 0", first[1], last[1], panelH)
	}
	for i, v := range []float64{10, 20, 30, 40} {
		if got, want := sync.Points[2*i][0], ax.pos(v); math.Abs(got-want) > 0.06 {
			t.Errorf("sample %v at x=%v, want %v", v, got, want)
		}
		// The median (second of four) reaches fraction 0.5.
		if i == 1 && sync.Points[2*i+1][1] != panelH/2 {
			t.Errorf("fraction after the second of four samples at y=%v, want %v", sync.Points[2*i+1][1], panelH/2)
		}
	}
	for i := 1; i < len(sync.Points); i++ {
		if sync.Points[i][0] < sync.Points[i-1][0] || sync.Points[i][1] > sync.Points[i-1][1] {
			t.Errorf("curve goes back at point %d: %v", i, sync.Points)
		}
	}
	// Karmada's 400 ms lies right of every sync sample.
	if k := doc.Polylines[1]; k.Points[len(k.Points)-1][0] <= sync.Points[7][0] {
		t.Errorf("Karmada's slowest sample at x=%v, not right of sync's at %v", k.Points[len(k.Points)-1][0], sync.Points[7][0])
	}
}
