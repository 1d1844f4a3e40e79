// Package dns edits a CoreDNS Corefile so that stock CoreDNS forwards the clusterset zone of
// KEP-1645 (clusterset.local) to the member's own DNS server (`kubectl mcs dns-server`). It only
// ever adds, replaces or removes one server block between its own marker comments; everything
// else in the Corefile is kept byte for byte.
package dns

import (
	"fmt"
	"strings"
)

// token is one word of a Corefile with the line it sits on (0-based).
type token struct {
	text string
	line int
}

// lex splits a Corefile into words, as CoreDNS's Caddyfile lexer does: whitespace separates words,
// '#' starts a comment outside quotes, quotes group words. Braces are words of their own.
func lex(s string) ([]token, error) {
	var out []token
	line := 0
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"':
			start, startLine := i, line
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				if s[i] == '\n' {
					line++
				}
				i++
			}
			if i >= len(s) {
				return nil, fmt.Errorf("line %d: unterminated quote", startLine+1)
			}
			i++
			out = append(out, token{text: s[start:i], line: startLine})
		default:
			start := i
			for i < len(s) && !strings.ContainsRune(" \t\r\n#\"", rune(s[i])) {
				i++
			}
			out = append(out, token{text: s[start:i], line: line})
		}
	}
	return out, nil
}

// Directive is one plugin line of a server block and the option lines of its own block, with
// the lines it spans (Line == End when it has no block).
type Directive struct {
	Name    string
	Args    []string
	Options [][]string
	Line    int
	End     int
}

// Server is one top-level server block: its keys and directives, and the lines it spans.
type Server struct {
	Keys       []string
	Directives []Directive
	First      int
	Last       int
}

// Zones returns the block's zones, lower-cased, without scheme, port or trailing dot ("." for root).
func (s Server) Zones() []string {
	var out []string
	for _, k := range s.Keys {
		out = append(out, zoneOf(k))
	}
	return out
}

// Port returns the port of the block's first key ("53" when none is given).
func (s Server) Port() string {
	if len(s.Keys) == 0 {
		return "53"
	}
	_, port := splitKey(s.Keys[0])
	return port
}

// Find returns the first directive called name, or nil.
func (s Server) Find(name string) *Directive {
	for i := range s.Directives {
		if s.Directives[i].Name == name {
			return &s.Directives[i]
		}
	}
	return nil
}

func splitKey(k string) (zone, port string) {
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
	}
	zone, port = k, "53"
	if i := strings.LastIndex(k, ":"); i >= 0 {
		zone, port = k[:i], k[i+1:]
	}
	return zone, port
}

func zoneOf(k string) string {
	z, _ := splitKey(k)
	z = strings.ToLower(strings.TrimSuffix(z, "."))
	if z == "" {
		return "."
	}
	return z
}

// Parse reads the server blocks of a Corefile. Snippets and top-level imports are skipped (they
// are not server blocks); anything else that is not a well-formed block is an error.
func Parse(corefile string) ([]Server, error) {
	toks, err := lex(corefile)
	if err != nil {
		return nil, err
	}
	var servers []Server
	for i := 0; i < len(toks); {
		if toks[i].text == "import" {
			// import FILE: everything on its line.
			l := toks[i].line
			for i < len(toks) && toks[i].line == l {
				i++
			}
			continue
		}
		// Keys up to '{' (keys may be separated by commas or spaces).
		s := Server{First: toks[i].line}
		for i < len(toks) && toks[i].text != "{" {
			if toks[i].text == "}" {
				return nil, fmt.Errorf("line %d: unexpected '}'", toks[i].line+1)
			}
			for _, k := range strings.Split(toks[i].text, ",") {
				if k != "" {
					s.Keys = append(s.Keys, k)
				}
			}
			i++
		}
		if i >= len(toks) {
			return nil, fmt.Errorf("line %d: server block %q has no body", s.First+1, strings.Join(s.Keys, " "))
		}
		if len(s.Keys) == 0 {
			return nil, fmt.Errorf("line %d: server block without a zone", s.First+1)
		}
		i++ // '{'
		end, err := parseBody(toks, i, &s)
		if err != nil {
			return nil, err
		}
		s.Last = toks[end].line
		i = end + 1
		if !strings.HasPrefix(s.Keys[0], "(") {
			servers = append(servers, s)
		}
	}
	return servers, nil
}

// parseBody reads directives from toks[i] to the '}' closing the block and returns its index.
func parseBody(toks []token, i int, s *Server) (int, error) {
	for i < len(toks) {
		t := toks[i]
		switch t.text {
		case "}":
			return i, nil
		case "{":
			return 0, fmt.Errorf("line %d: '{' without a directive", t.line+1)
		}
		d := Directive{Name: t.text, Line: t.line, End: t.line}
		i++
		for i < len(toks) && toks[i].line == t.line && toks[i].text != "{" && toks[i].text != "}" {
			d.Args = append(d.Args, toks[i].text)
			i++
		}
		if i < len(toks) && toks[i].text == "{" {
			i++
			depth := 1
			var opt []string
			optLine := -1
			for i < len(toks) && depth > 0 {
				switch toks[i].text {
				case "{":
					depth++
				case "}":
					depth--
					d.End = toks[i].line
				default:
					if depth == 1 {
						if toks[i].line != optLine && opt != nil {
							d.Options = append(d.Options, opt)
							opt = nil
						}
						optLine = toks[i].line
						opt = append(opt, toks[i].text)
					}
				}
				i++
			}
			if depth > 0 {
				break
			}
			if opt != nil {
				d.Options = append(d.Options, opt)
			}
		}
		s.Directives = append(s.Directives, d)
	}
	return 0, fmt.Errorf("line %d: server block %q is not closed", s.First+1, strings.Join(s.Keys, " "))
}
