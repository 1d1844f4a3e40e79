package diagnose

import (
	"strings"
	"unicode/utf8"
)

// DefaultWidth is the width the text output fits when it does not go to a terminal.
const DefaultWidth = 80

// wrap fills text into lines of at most width columns: the first after a prefix of first
// columns, the others indented by indent spaces. A kubectl command is never broken as prose is:
// it starts a line of its own when it does not fit the current one, and when it does not fit a
// whole line either it is continued with " \" before a flag, so that it still pastes into a
// shell as one command. Only a single word wider than the line overflows it.
func wrap(text string, first, indent, width int) string {
	var b strings.Builder
	col, atStart := first, true
	newline := func(extra int) {
		b.WriteString("\n" + strings.Repeat(" ", indent+extra))
		col, atStart = indent+extra, true
	}
	write := func(u string) {
		if !atStart {
			b.WriteString(" ")
			col++
		}
		b.WriteString(u)
		col += utf8.RuneCountInString(u)
		atStart = false
	}
	fits := func(u string, room int) bool {
		n := utf8.RuneCountInString(u)
		if !atStart {
			n++
		}
		return col+n <= room
	}
	words := strings.Fields(text)
	for i := 0; i < len(words); {
		if !isCommand(words[i]) {
			if !atStart && !fits(words[i], width) {
				newline(0)
			}
			write(words[i])
			i++
			continue
		}
		end := i + 1
		for end < len(words) && !endsCommand(words[end-1]) {
			end++
		}
		units := commandUnits(words[i:end])
		whole := strings.Join(units, " ")
		if !atStart && !fits(whole, width) {
			newline(0)
		}
		for j, u := range units {
			room := width
			if j < len(units)-1 {
				room -= 2 // for " \"
			}
			if j > 0 && !fits(u, room) && !fits(strings.Join(units[j:], " "), width) {
				b.WriteString(" \\")
				newline(2)
			}
			write(u)
		}
		i = end
	}
	return b.String()
}

func isCommand(w string) bool {
	return w == "kubectl" || w == "(kubectl"
}

// endsCommand: a command in a sentence ends with the word that ends the clause.
func endsCommand(w string) bool {
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, ")") || strings.HasSuffix(w, ",") ||
		strings.HasSuffix(w, ";") || strings.HasSuffix(w, ":") || strings.HasSuffix(w, "?")
}

// commandUnits groups a command's words so that a line may break only before a flag, which
// keeps every flag with its value.
func commandUnits(words []string) []string {
	var units []string
	for _, w := range words {
		if len(units) > 0 && !strings.HasPrefix(w, "-") {
			units[len(units)-1] += " " + w
			continue
		}
		units = append(units, w)
	}
	return units
}
