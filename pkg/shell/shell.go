// Package shell holds the commands kubectl-mcs prints for the user to run. A command is a value
// of its own, never words inside a sentence: it is printed on lines of its own, each word quoted
// for a POSIX shell (Quote, the one quoting rule), so that a line pastes into a shell and runs
// exactly the words it was built from, with no full stop or bracket of the prose around it.
package shell

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Command is one command line: a pipeline of one or more programs, each an argv.
type Command struct {
	stages [][]string
}

// New is the command argv.
func New(argv ...string) Command {
	return Command{stages: [][]string{argv}}
}

// Kubectl is `kubectl ARGS...`.
func Kubectl(args ...string) Command { return New(append([]string{"kubectl"}, args...)...) }

// MCS is `kubectl mcs ARGS...`.
func MCS(args ...string) Command { return New(append([]string{"kubectl", "mcs"}, args...)...) }

// Pipe is c with its output piped into argv.
func (c Command) Pipe(argv ...string) Command {
	return Command{stages: append(append([][]string(nil), c.stages...), argv)}
}

// Stages are the argv of each program of the pipeline, in order.
func (c Command) Stages() [][]string { return c.stages }

// IsZero says whether c holds no command.
func (c Command) IsZero() bool { return len(c.stages) == 0 }

// String is the command as one line for a POSIX shell.
func (c Command) String() string {
	return strings.Join(c.units(), " ")
}

// units are the words of the line, each flag with the words up to the next flag (its value) and
// "|" with the program after it, so that a line may be broken between any two of them.
func (c Command) units() []string {
	var units []string
	for i, argv := range c.stages {
		for j, w := range argv {
			q := Quote(w)
			switch {
			case j == 0 && i > 0:
				units = append(units, "| "+q)
			case j > 0 && (w == "-" || !strings.HasPrefix(w, "-")):
				units[len(units)-1] += " " + q // a line breaks only before a flag
			default:
				units = append(units, q)
			}
		}
	}
	return units
}

// Lines is the command fitted to width columns after indent spaces: one line when it fits,
// else continued with " \" before a flag or a pipe, the continuation lines indented two more
// columns. Every line is what a shell reads as the one command. A unit wider than the line
// overflows it.
func (c Command) Lines(indent, width int) []string {
	pad := strings.Repeat(" ", indent)
	units := c.units()
	var lines []string
	cur := pad
	empty := true
	for i, u := range units {
		room := width
		if i < len(units)-1 {
			room -= 2 // for " \"
		}
		rest := strings.Join(units[i:], " ")
		if !empty && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(u) > room &&
			utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(rest) > width {
			lines = append(lines, cur+" \\")
			cur, empty = pad+"  ", true
		}
		if !empty {
			cur += " "
		}
		cur += u
		empty = false
	}
	return append(lines, cur)
}

// MarshalJSON writes the command as its one line.
func (c Command) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// UnmarshalJSON reads a line that String wrote back into its words.
func (c *Command) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	parsed, err := Parse(s)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// Quote is w as one word of a POSIX shell: as it is when every character is one a shell takes
// literally, else between single quotes (a single quote in it written as '\”).
func Quote(w string) string {
	if w == "" {
		return "''"
	}
	if strings.IndexFunc(w, func(r rune) bool { return !plain(r) }) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func plain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r)
}

// Parse reads back a line String wrote: words split at unquoted blanks, single quotes and
// backslashes as a shell reads them, "|" between the programs of a pipeline.
func Parse(line string) (Command, error) {
	var c Command
	var argv []string
	var word strings.Builder
	inWord, quoted := false, false
	end := func() {
		if inWord {
			argv = append(argv, word.String())
			word.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted:
			if ch == '\'' {
				quoted = false
			} else {
				word.WriteByte(ch)
			}
		case ch == '\'':
			quoted, inWord = true, true
		case ch == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case ch == ' ' || ch == '\t':
			end()
		case ch == '|':
			end()
			if len(argv) == 0 {
				return Command{}, errors.New("empty program before |")
			}
			c.stages, argv = append(c.stages, argv), nil
		default:
			word.WriteByte(ch)
			inWord = true
		}
	}
	if quoted {
		return Command{}, errors.New("unterminated quote")
	}
	end()
	if len(argv) == 0 {
		return Command{}, errors.New("no command")
	}
	c.stages = append(c.stages, argv)
	return c, nil
}

// Block is cmds for the end of a message (an error, a warning) whose sentence ends with a colon:
// each command on a line of its own, indented two spaces, never folded.
func Block(cmds ...Command) string {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString("\n  " + c.String())
	}
	return b.String()
}
