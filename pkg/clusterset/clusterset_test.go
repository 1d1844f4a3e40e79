package clusterset

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseContexts(t *testing.T) {
	cases := []struct {
		in      string
		want    []Ref
		wantErr string
	}{
		{in: "member1,member2", want: []Ref{{"member1", "member1", IDFromContext}, {"member2", "member2", IDFromContext}}},
		{in: " a=east , b=west ", want: []Ref{{"a", "east", IDFromFlag}, {"b", "west", IDFromFlag}}},
		{in: "kind-member1=member1", want: []Ref{{"kind-member1", "member1", IDFromFlag}}},
		{in: "", want: nil},
		{in: "Admin@Prod", wantErr: `context "Admin@Prod": its name is not a valid cluster ID`},
		{in: "ctx=Bad_ID", wantErr: `context "ctx": cluster ID "Bad_ID" is not a valid RFC 1123 label`},
		{in: "a,a", wantErr: `context "a" is listed twice`},
		{in: "a=x,b=x", wantErr: `contexts "a" and "b" both have cluster ID "x"`},
		{in: "=x", wantErr: `has no context name`},
	}
	for _, c := range cases {
		got, err := ParseContexts(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseContexts(%q) error = %v, want it to contain %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseContexts(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
