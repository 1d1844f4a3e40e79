package printers

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableLooksLikeKubectl(t *testing.T) {
	var b bytes.Buffer
	err := Table(&b, []string{"cluster", "kind", "object"}, [][]string{
		{"member1", "ServiceImport", "demo/serve"},
		{"member2", "EndpointSlice", "demo/derived-serve-member1-abc"},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header + 2 rows, got %d lines:\n%s", len(lines), b.String())
	}
	if !strings.HasPrefix(lines[0], "CLUSTER   KIND            OBJECT") {
		t.Errorf("header %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "member2   EndpointSlice   demo/derived-serve-member1-abc") {
		t.Errorf("row %q", lines[2])
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "|+-") && !strings.Contains(l, "derived-serve") {
			t.Errorf("border characters in %q", l)
		}
	}
	b.Reset()
	_ = Table(&b, []string{"a"}, [][]string{{"x"}}, true)
	if strings.TrimSpace(b.String()) != "x" {
		t.Errorf("--no-headers output %q", b.String())
	}
}

func TestTableNoTrailingSpaces(t *testing.T) {
	var b bytes.Buffer
	_ = Table(&b, []string{"a", "b"}, [][]string{{"1", "2"}}, false)
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space in %q", l)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"abcdef\nab\n", 4, "abcd\nab\n"},
		{"abcdef", 0, "abcdef"},
		{"\x1b[31mabcdef\x1b[0m\n", 3, "\x1b[31mabc\x1b[0m\n"},
		{"\x1b[31mabc\x1b[0m\n", 3, "\x1b[31mabc\x1b[0m\n"},
		{"Status: ✖ failed\n", 9, "Status: ✖\n"},
	} {
		if got := Cut(tc.in, tc.width); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
