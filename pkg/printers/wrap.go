package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the width every table, stream and description fits for a typical service (three
// clusters, three ports, 20-character names) when it goes to a pipe or a file; long values go to
// -o wide or the description, where they wrap.
const Width = 80

// Wrap fills prose into lines of at most width columns: the first after a prefix of first
// columns, the others indented by indent spaces. A word wider than a line (a URL in an error) is
// broken after a '/', '?' or '&'; only one without them overflows.
func Wrap(text string, first, indent, width int) string {
	var b strings.Builder
	col, atStart := first, true
	for _, w := range words(text, width-indent) {
		n := utf8.RuneCountInString(w.s)
		space := !atStart && !w.glued
		if !atStart && col+btoi(space)+n > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col, atStart, space = indent, true, false
		}
		if space {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w.s)
		col += n
		atStart = false
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// word is a word of prose, or the part of one (glued to the part before it) that a line break
// may come before.
type word struct {
	s     string
	glued bool
}

// words splits text at its spaces, and a word wider than room after its last '/', '?' or '&'
// that fits, so that the parts fit a line.
func words(text string, room int) []word {
	var out []word
	for _, w := range strings.Fields(text) {
		glued := false
		for room > 0 && utf8.RuneCountInString(w) > room {
			head := string([]rune(w)[:room])
			cut := strings.LastIndexAny(head, "/?&")
			if cut <= 0 {
				break
			}
			out = append(out, word{w[:cut+1], glued})
			w, glued = w[cut+1:], true
		}
		out = append(out, word{w, glued})
	}
	return out
}

// Field writes one "Label:  value" line of a description, as kubectl describe does, the value
// starting at column at and wrapped under itself when it is longer than the line.
func Field(w io.Writer, indent, at int, label, value string) {
	head := fmt.Sprintf("%s%-*s", strings.Repeat(" ", indent), at-indent, label+":")
	if n := utf8.RuneCountInString(head); n > at {
		at = n + 1
		head += " "
	}
	fmt.Fprintln(w, head+Wrap(value, at, at, Width))
}

// TableNotes writes a table indent spaces in, each row followed by its note (if any), wrapped
// two columns further in: a long message under its row rather than in a column that would push
// the row past the width.
func TableNotes(w io.Writer, indent int, headers []string, rows [][]string, notes []string) error {
	var buf bytes.Buffer
	if err := Table(&buf, headers, rows, false); err != nil {
		return err
	}
	pad := strings.Repeat(" ", indent)
	for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if _, err := io.WriteString(w, pad+line+"\n"); err != nil {
			return err
		}
		if r := i - 1; r >= 0 && r < len(notes) && strings.TrimSpace(notes[r]) != "" {
			at := indent + 2
			if _, err := io.WriteString(w, strings.Repeat(" ", at)+Wrap(notes[r], at, at, Width)+"\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

// LongLines lists the lines of s wider than width columns (colour escapes take none): what a
// test of the width rule reports.
func LongLines(s string, width int) []string {
	var long []string
	for _, l := range strings.Split(s, "\n") {
		if cutLine(l, width) != l && strings.TrimSuffix(cutLine(l, width), "\x1b[0m") != l {
			long = append(long, fmt.Sprintf("%d columns: %q", utf8.RuneCountInString(l), l))
		}
	}
	return long
}
