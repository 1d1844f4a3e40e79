package diagnose

import (
	"strings"
	"unicode/utf8"
)

// DefaultWidth is the width the text output fits when it does not go to a terminal.
const DefaultWidth = 80

// wrap fills prose into lines of at most width columns: the first after a prefix of first
// columns, the others indented by indent spaces. Only a single word wider than the line overflows
// it. Commands are never prose: they are printed on lines of their own (shell.Command.Lines).
func wrap(text string, first, indent, width int) string {
	var b strings.Builder
	col, atStart := first, true
	for _, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		if !atStart && col+1+n > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col, atStart = indent, true
		}
		if !atStart {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += n
		atStart = false
	}
	return b.String()
}
