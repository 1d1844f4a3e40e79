package diagnose

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// titles head the sections of the text output.
var titles = map[string]string{
	CheckReachable:     "Members reachable",
	CheckCRDs:          "mcs-api CRDs",
	CheckClusterID:     "Cluster IDs",
	CheckRBAC:          "Permissions of sync",
	CheckClock:         "Clock skew",
	CheckDNS:           "CoreDNS",
	CheckExportService: "Exported Services",
	CheckExportConds:   "ServiceExport conditions",
	CheckConflict:      "Export conflicts",
	CheckEndpoints:     "Endpoints of the exported Services",
	CheckImport:        "ServiceImports",
	CheckImportIP:      "ServiceImport type and IP",
	CheckDerived:       "Derived Services",
	CheckSlices:        "Imported EndpointSlices",
	CheckFreshness:     "Imported endpoints up to date",
	CheckForeignSlice:  "EndpointSlices from outside the clusterset",
	CheckKarmada:       "Karmada control plane",
	CheckKarmadaPlaced: "Placed by Karmada",
}

// TextOptions: Symbols prints ✔/✖/! (a terminal), else ok/FAIL/warn; Color colours them. Width
// is the columns the lines fit (DefaultWidth when 0): the terminal's on a terminal.
type TextOptions struct {
	Symbols, Color bool
	Width          int
}

func mark(sev Severity, o TextOptions) string {
	var s, c string
	switch sev {
	case Fail:
		s, c = "FAIL", "\x1b[31m"
		if o.Symbols {
			s = "✖"
		}
	case Warn:
		s, c = "warn", "\x1b[33m"
		if o.Symbols {
			s = "!"
		}
	default:
		s, c = "ok", "\x1b[32m"
		if o.Symbols {
			s = "✔"
		}
	}
	if !o.Symbols {
		s = fmt.Sprintf("%-4s", s)
	}
	if o.Color {
		return c + s + "\x1b[0m"
	}
	return s
}

// PrintText writes one section per check, one result per paragraph (wrapped to o.Width), the fix
// indented below failures and warnings and its commands below it, each on lines of its own, then
// the summary.
func PrintText(w io.Writer, r *Report, o TextOptions) error {
	width := o.Width
	if width <= 0 {
		width = DefaultWidth
	}
	// The mark is one column with symbols, four without; the result's text hangs after it.
	indent := 7
	if o.Symbols {
		indent = 4
	}
	var b strings.Builder
	last := ""
	for _, x := range r.Results {
		if x.Check != last {
			if last != "" {
				b.WriteString("\n")
			}
			title := titles[x.Check]
			if title == "" {
				title = x.Check
			}
			fmt.Fprintf(&b, "%s (%s)\n", title, x.Check)
			last = x.Check
		}
		where := x.Cluster
		if where == "" {
			where = "clusterset"
		}
		head, text := where+"  ", x.Object+": "+x.Message
		if x.Object == "" {
			head, text = where+": ", x.Message
		}
		fmt.Fprintf(&b, "  %s %s%s\n", mark(x.Severity, o), head, wrap(text, indent+len(head), indent, width))
		if x.Fix != "" && x.Severity != OK {
			fmt.Fprintf(&b, "       fix: %s\n", wrap(x.Fix, 12, 12, width))
			for _, c := range x.Commands {
				b.WriteString(strings.Join(c.Lines(14, width), "\n") + "\n")
			}
		}
	}
	if last != "" {
		b.WriteString("\n")
	}
	s := r.Summary
	fmt.Fprintf(&b, "%d passed, %d failed, %d warnings\n", s.Passed, s.Failed, s.Warnings)
	_, err := io.WriteString(w, b.String())
	return err
}

// JUnit documents: one testsuite per check, one testcase per object (and cluster); failures as
// <failure>, warnings as <skipped> (they do not fail the run).
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one check.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one result.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitMessage is a failure or a skip: the message, the fix and its commands as its text.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit converts the report.
func JUnit(r *Report) *JUnitSuites {
	out := &JUnitSuites{Name: "kubectl mcs diagnose"}
	idx := map[string]int{}
	for _, x := range r.Results {
		i, ok := idx[x.Check]
		if !ok {
			i = len(out.Suites)
			idx[x.Check] = i
			out.Suites = append(out.Suites, JUnitSuite{Name: x.Check})
		}
		s := &out.Suites[i]
		name := x.Cluster
		if x.Object != "" {
			name = strings.TrimPrefix(name+" "+x.Object, " ")
		}
		c := JUnitCase{Name: name, ClassName: "diagnose." + x.Check}
		switch x.Severity {
		case Fail:
			c.Failure = &JUnitMessage{Message: x.Message, Text: fixText(x)}
			s.Failures++
		case Warn:
			c.Skipped = &JUnitMessage{Message: "warning: " + x.Message, Text: fixText(x)}
			s.Skipped++
		default:
			c.SystemOut = x.Message
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	for _, s := range out.Suites {
		out.Tests, out.Failures, out.Skipped = out.Tests+s.Tests, out.Failures+s.Failures, out.Skipped+s.Skipped
	}
	return out
}

// fixText is the fix and its commands, one a line.
func fixText(x Result) string {
	lines := []string{x.Fix}
	for _, c := range x.Commands {
		lines = append(lines, c.String())
	}
	return strings.Join(lines, "\n")
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(r)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
