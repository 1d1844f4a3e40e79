package printers

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Cut shortens every line of s to width columns (one per rune; colour escapes take none), so
// that a terminal never wraps it: status --watch redraws in place, and a wrapped line would push
// the table off the screen and leave its start behind. A line cut inside colour gets the reset.
// width <= 0 leaves s alone.
func Cut(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		lines[i] = cutLine(l, width)
	}
	return strings.Join(lines, "")
}

func cutLine(l string, width int) string {
	body, nl := strings.CutSuffix(l, "\n")
	cols, escaped := 0, false
	for i := 0; i < len(body); {
		if body[i] == 0x1b { // CSI: ESC [ parameters final-byte
			j := i + 1
			for j < len(body) && (body[j] == '[' || body[j] == ';' || (body[j] >= '0' && body[j] <= '9')) {
				j++
			}
			if j < len(body) {
				j++
			}
			i, escaped = j, true
			continue
		}
		if cols == width {
			body = body[:i]
			if escaped {
				body += "\x1b[0m"
			}
			break
		}
		_, n := utf8.DecodeRuneInString(body[i:])
		i += n
		cols++
	}
	if nl {
		body += "\n"
	}
	return body
}

// TerminalWidth is the width of the terminal w writes to, 0 when it is not one.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !IsTerminal(w) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
