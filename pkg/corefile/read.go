// Package corefile edits a CoreDNS Corefile so that stock CoreDNS forwards the clusterset zone of
// KEP-1645 (clusterset.local) to the member's own DNS server (`kubectl mcs dns-server`). It only
// ever adds, replaces or removes one server block between its own marker comments; everything
// else in the Corefile is kept byte for byte. What the rest of the Corefile serves is read with
// CoreDNS's own parser (github.com/coredns/caddy/caddyfile, the version CoreDNS v1.15 uses), so
// that quotes, comments, snippets, imports and placeholders mean here what they mean to CoreDNS.
package corefile

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coredns/caddy/caddyfile"
)

// Directive is one use of a plugin in a server block and the option lines of its own block, with
// the lines it spans (0-based; Line == End when it has no block). A directive an `import` brought
// from a snippet has the snippet's lines.
type Directive struct {
	Name    string
	Args    []string
	Options [][]string
	Line    int
	End     int
}

// Server is one server block: its keys as CoreDNS reads them (unquoted), its directives in the
// order of their lines, and the lines it spans (-1 for a block a top-level import brought in).
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

// splitKey splits a block key as CoreDNS does (plugin.SplitHostPort after parse.Transport): the
// scheme dropped, and a port only when what follows the last colon is a number.
func splitKey(k string) (zone, port string) {
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
	}
	zone, port = k, "53"
	if i := strings.LastIndex(k, ":"); i >= 0 {
		if _, err := strconv.Atoi(k[i+1:]); err == nil {
			zone, port = k[:i], k[i+1:]
		}
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

// Parse reads the server blocks of a Corefile as a CoreDNS process started here would: with
// placeholders ({$VAR}, {%VAR%}) filled from this process's environment.
func Parse(text string) ([]Server, error) {
	return read(text, true)
}

// unknown stands for the '{' of a placeholder whose value is not known: a Corefile read from a
// cluster is filled from the CoreDNS pod's environment, not ours (see hasPlaceholder).
const unknown = "\x00"

// placeholder matches what caddyfile fills from the environment.
var placeholder = regexp.MustCompile(`\{\$[^}\n]+\}|\{%[^\n]+?%\}`)

func hasPlaceholder(s string) bool { return strings.Contains(s, unknown) }

// shown is s as it was written, placeholders included.
func shown(s string) string { return strings.ReplaceAll(s, unknown, "{") }

// read parses a Corefile with caddyfile. With env false, placeholders are kept (marked) rather
// than filled from our environment. Files an import names are never read: they are the CoreDNS
// pod's, so each reads as an empty snippet (importStubs).
func read(text string, env bool) ([]Server, error) {
	if strings.Contains(text, unknown) {
		return nil, fmt.Errorf("the Corefile holds a NUL byte")
	}
	if !env {
		text = placeholder.ReplaceAllStringFunc(text, func(p string) string { return unknown + p[1:] })
	}
	raw := lex(text)
	stubs, err := importStubs(raw, env)
	if err != nil {
		return nil, err
	}
	// The stubs take lines of their own before the Corefile: off is what every line is shifted by.
	off := 0
	if stubs != "" {
		stubs += "\n"
		off = strings.Count(stubs, "\n")
	}
	blocks, err := caddyfile.Parse("Corefile", strings.NewReader(stubs+text), nil)
	if err != nil {
		return nil, lineOf(err, off)
	}
	spans := blockSpans(raw)
	servers := make([]Server, 0, len(blocks))
	for i, b := range blocks {
		s := Server{Keys: b.Keys, First: -1, Last: -1}
		if len(spans) == len(blocks) {
			s.First, s.Last = spans[i][0]-1, spans[i][1]-1
		}
		// caddyfile takes a stray brace for a key; CoreDNS would then fail on it as a zone.
		if slices.Contains(b.Keys, "}") || slices.Contains(b.Keys, "{") {
			return nil, fmt.Errorf("line %d: unexpected brace", s.First+1)
		}
		names := make([]string, 0, len(b.Tokens))
		for name := range b.Tokens {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			toks := b.Tokens[name]
			if !pluginName.MatchString(name) && !hasPlaceholder(name) {
				return nil, fmt.Errorf("line %d: %q is not a plugin's name", toks[0].Line-off, name)
			}
			for _, use := range uses(toks) {
				s.Directives = append(s.Directives, directive(name, use, off))
			}
		}
		sort.Slice(s.Directives, func(i, j int) bool {
			a, b := s.Directives[i], s.Directives[j]
			return a.Line < b.Line || a.Line == b.Line && a.Name < b.Name
		})
		servers = append(servers, s)
	}
	return servers, nil
}

// lex is the Corefile's tokens, by caddyfile's lexer.
func lex(text string) []caddyfile.Token {
	d := caddyfile.NewDispenser("Corefile", strings.NewReader(text))
	var out []caddyfile.Token
	for d.Next() {
		out = append(out, caddyfile.Token{Line: d.Line(), Text: d.Val()})
	}
	return out
}

// pluginName is what CoreDNS's plugins are called. CoreDNS gives caddyfile the list of its own,
// which refuses the rest; a Corefile from a build with other plugins is read here all the same.
var pluginName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// caddyLine is how caddyfile places its errors.
var caddyLine = regexp.MustCompile(`^Corefile:(\d+) - Error during parsing: `)

// lineOf words a caddyfile error as "line N: ...", N counted in the Corefile itself.
func lineOf(err error, off int) error {
	msg := shown(err.Error())
	if m := caddyLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("line %d: %s", n-off, msg[len(m[0]):])
	}
	return fmt.Errorf("%s", msg)
}

// importStubs declares an empty snippet for every name an import gives that no snippet declared
// before it has: caddyfile would read such a name as a file of this machine, where the CoreDNS
// pod reads its own (k3s imports /etc/coredns/custom/*.server). What those files serve is not
// known here. A snippet imported before its declaration is refused, for the same reason.
func importStubs(toks []caddyfile.Token, env bool) (string, error) {
	declared := map[string]int{}
	for i, t := range toks {
		if name, ok := strings.CutPrefix(t.Text, "("); ok && strings.HasSuffix(name, ")") &&
			i+1 < len(toks) && toks[i+1].Text == "{" && (i == 0 || toks[i-1].Line < t.Line) {
			if _, dup := declared[name[:len(name)-1]]; !dup {
				declared[name[:len(name)-1]] = i
			}
		}
	}
	var stubs []string
	seen := map[string]bool{}
	for i, t := range toks {
		if t.Text != "import" || i+1 == len(toks) || toks[i+1].Line != t.Line {
			continue
		}
		name := toks[i+1].Text
		if env {
			name = placeholder.ReplaceAllStringFunc(name, func(p string) string {
				return os.Getenv(strings.Trim(p[1:len(p)-1], "$%"))
			})
		}
		if at, ok := declared[name]; ok {
			if at > i {
				return "", fmt.Errorf("line %d: import %q before the snippet's declaration", t.Line, shown(name))
			}
			continue
		}
		if !seen[name] {
			seen[name] = true
			// Quoted as caddyfile's lexer reads quotes: \" is its one escape.
			stubs = append(stubs, `"(`+strings.ReplaceAll(name, `"`, `\"`)+`)" { }`)
		}
	}
	return strings.Join(stubs, " "), nil
}

// blockSpans are the first and last lines (1-based) of the top-level blocks that are server
// blocks, for an editor of lines (internal/corednshost): top-level imports and snippets skipped.
func blockSpans(toks []caddyfile.Token) [][2]int {
	var out [][2]int
	depth, start := 0, -1
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if depth == 0 && start < 0 {
			if t.Text == "import" {
				i++
				continue
			}
			start = i
		}
		switch t.Text {
		case "{":
			depth++
		case "}":
			if depth--; depth == 0 {
				if !strings.HasPrefix(toks[start].Text, "(") {
					out = append(out, [2]int{toks[start].Line, t.Line})
				}
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, [2]int{toks[start].Line, toks[len(toks)-1].Line})
	}
	return out
}

// uses splits the tokens caddyfile grouped under one directive name into its uses: a use ends
// where a token outside its braces sits on another line than the one before it.
func uses(toks []caddyfile.Token) [][]caddyfile.Token {
	var out [][]caddyfile.Token
	depth, start := 0, 0
	for i, t := range toks {
		if i > 0 && depth == 0 && toks[i-1].Line+strings.Count(toks[i-1].Text, "\n") != t.Line {
			out = append(out, toks[start:i])
			start = i
		}
		switch t.Text {
		case "{":
			depth++
		case "}":
			depth--
		}
	}
	return append(out, toks[start:])
}

// directive reads one use of a plugin as CoreDNS's plugins read theirs: the arguments on its line,
// then each line of its block.
func directive(name string, toks []caddyfile.Token, off int) Directive {
	last := toks[len(toks)-1]
	d := Directive{Name: name, Line: toks[0].Line - off - 1, End: last.Line + strings.Count(last.Text, "\n") - off - 1}
	c := caddyfile.NewDispenserTokens("Corefile", toks)
	c.Next()
	d.Args = c.RemainingArgs()
	for c.NextBlock() {
		d.Options = append(d.Options, append([]string{c.Val()}, c.RemainingArgs()...))
	}
	return d
}
