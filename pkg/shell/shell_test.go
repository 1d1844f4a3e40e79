package shell

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/internal/shellparse"
)

// Every command, as one line and folded to any width, is read by a POSIX shell parser as exactly
// the words it was built from; JSON carries it as that line and reads it back.
func TestLinesParseBackToTheWords(t *testing.T) {
	for _, c := range []Command{
		Kubectl("--context", "member1", "-n", "db", "get", "endpointslices", "-l", "kubernetes.io/service-name=db"),
		MCS("init", "--contexts=member1"),
		MCS("dns-server", "--print-manifests", "--context", "member 2").Pipe("kubectl", "--context", "member 2", "apply", "-f", "-"),
		Kubectl("--context", "it's", "get", "svc", "a;b", "$HOME", "*", "~x", "", `back\slash`, "(x)", "\"q\"", "#c", "é"),
	} {
		want := c.Stages()
		for _, width := range []int{0, 20, 40, 80, 1000} {
			text := c.String()
			if width > 0 {
				text = strings.Join(c.Lines(4, width), "\n")
			}
			got, err := shellparse.Pipeline(text)
			if err != nil {
				t.Fatalf("width %d: %v\n%s", width, err, text)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("width %d: %q parses to %q, want %q", width, text, got, want)
			}
			for _, l := range strings.Split(text, "\n") {
				if n := len([]rune(l)); width > 0 && n > width && !strings.Contains(strings.TrimSpace(strings.TrimSuffix(l, " \\")), " ") {
					continue // one unit wider than the line overflows it
				} else if width > 0 && n > width && len(c.Lines(4, width)) == 1 {
					t.Errorf("width %d: %d columns: %q", width, n, l)
				}
			}
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Command
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Stages(), want) {
			t.Errorf("json %s reads back as %q (%v), want %q", b, back.Stages(), err, want)
		}
	}
}

func TestQuote(t *testing.T) {
	for w, want := range map[string]string{
		"member1": "member1", "kubernetes.io/service-name=db": "kubernetes.io/service-name=db", "--contexts=a=b,c": "--contexts=a=b,c",
		"": "''", "a b": "'a b'", "it's": `'it'\''s'`, "db.": "db.", "-": "-",
	} {
		if got := Quote(w); got != want {
			t.Errorf("Quote(%q) = %s, want %s", w, got, want)
		}
	}
}

// A command that does not fit breaks before a flag or a pipe only, each line within the width.
func TestLinesBreakBeforeFlags(t *testing.T) {
	c := Kubectl("--context", "member2", "-n", "demo", "get", "endpointslices", "-l", "kubernetes.io/service-name=web")
	got := strings.Join(c.Lines(9, 80), "\n")
	want := "         kubectl --context member2 -n demo get endpointslices \\\n" +
		"           -l kubernetes.io/service-name=web"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := c.Lines(0, 200); len(got) != 1 || got[0] != c.String() {
		t.Errorf("wide enough: %q", got)
	}
	p := MCS("dns-server", "--print-manifests", "--context", "member1").Pipe("kubectl", "--context", "member1", "apply", "-f", "-")
	if got := p.Lines(2, 70); len(got) != 2 || !strings.HasPrefix(got[1], "    | kubectl --context member1 apply -f -") {
		t.Errorf("pipe: %q", got)
	}
}
