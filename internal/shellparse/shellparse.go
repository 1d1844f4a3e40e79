// Package shellparse reads a command line as a POSIX shell does (mvdan.cc/sh's parser), for the
// tests that hold every command kubectl-mcs prints to being one command whose words are exactly
// the ones meant.
package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Pipeline parses text (one line, or lines continued with a backslash) and returns the argv of
// each program of its one pipeline. It fails unless text is exactly one simple command or one
// pipeline of them, every word a literal once quotes are removed: no expansion, redirection,
// assignment, list or comment.
func Pipeline(text string) ([][]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(text), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) != 1 || len(f.Last) > 0 {
		return nil, fmt.Errorf("%d statements (and %d trailing comments), want one command: %q", len(f.Stmts), len(f.Last), text)
	}
	var out [][]string
	var walk func(st *syntax.Stmt) error
	walk = func(st *syntax.Stmt) error {
		if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(st.Comments) > 0 {
			return fmt.Errorf("not a plain command: %q", text)
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op != syntax.Pipe {
				return fmt.Errorf("%s between commands, want a pipe: %q", c.Op, text)
			}
			if err := walk(c.X); err != nil {
				return err
			}
			return walk(c.Y)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 {
				return fmt.Errorf("an assignment: %q", text)
			}
			var argv []string
			for _, w := range c.Args {
				s, err := literal(w)
				if err != nil {
					return fmt.Errorf("%v in %q", err, text)
				}
				argv = append(argv, s)
			}
			out = append(out, argv)
			return nil
		}
		return fmt.Errorf("not a simple command or pipeline: %q", text)
	}
	if err := walk(f.Stmts[0]); err != nil {
		return nil, err
	}
	return out, nil
}

// literal is the word's value once quotes are removed. It refuses a word whose value a shell
// would compute: parameters, command substitutions, arithmetic, globs, a leading tilde.
func literal(w *syntax.Word) (string, error) {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", fmt.Errorf("a $'...' word")
			}
			b.WriteString(p.Value)
		case *syntax.Lit:
			if globs(p.Value) || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				return "", fmt.Errorf("word %q would be expanded", p.Value)
			}
			b.WriteString(unescape(p.Value, ""))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", fmt.Errorf("an expansion in double quotes")
				}
				b.WriteString(unescape(l.Value, "$`\"\\\n"))
			}
		default:
			return "", fmt.Errorf("an expansion (%T)", p)
		}
	}
	return b.String(), nil
}

// unescape removes the backslashes a shell removes: before any character outside quotes
// (only == ""), before one of only inside double quotes.
func unescape(s, only string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// globs says whether an unquoted literal holds a pattern character not escaped.
func globs(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}
