package clusterset

import (
	"errors"
	"strings"
	"testing"
)

func TestAdoptID(t *testing.T) {
	for _, c := range []struct {
		ref        Ref
		property   string
		wantID     string
		wantSource string
		wantErr    string
	}{
		{ref: Ref{"ctx", "ctx", IDFromContext}, property: "", wantID: "ctx", wantSource: IDFromContext},
		{ref: Ref{"ctx", "ctx", IDFromContext}, property: "east", wantID: "east", wantSource: IDFromProperty},
		{ref: Ref{"ctx", "east", IDFromFlag}, property: "east", wantID: "east", wantSource: IDFromProperty},
		{ref: Ref{"ctx", "west", IDFromFlag}, property: "east", wantErr: `--contexts names it "west" but its clusterproperty/cluster.clusterset.k8s.io says "east"`},
		{ref: Ref{"ctx", "ctx", IDFromContext}, property: "Not_A_Label", wantErr: `"Not_A_Label" is not a valid cluster ID`},
	} {
		m := &Connection{Ref: c.ref}
		err := m.AdoptID(c.property)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%+v/%q: err = %v, want %q", c.ref, c.property, err, c.wantErr)
			}
			continue
		}
		if err != nil || m.ID != c.wantID || m.IDSource != c.wantSource {
			t.Errorf("%+v/%q: got %q %q %v", c.ref, c.property, m.ID, m.IDSource, err)
		}
	}
}

func TestUniqueIDs(t *testing.T) {
	prop := func(ctx, id string) *Connection {
		return &Connection{Ref: Ref{Context: ctx, ID: id, IDSource: IDFromProperty}}
	}
	ms := []*Connection{prop("a", "x"), prop("b", "y"), prop("c", "x")}
	uniqueIDs(ms)
	if ms[1].Err != nil || ms[0].Err == nil || !strings.Contains(ms[0].Err.Error(), `context "c"`) || ms[2].Err == nil || !strings.Contains(ms[2].Err.Error(), `context "a"`) {
		t.Fatalf("errs: %v %v %v", ms[0].Err, ms[1].Err, ms[2].Err)
	}
}

// An unreachable member keeps the ID --contexts gave it; a reachable one whose property says
// that ID is reported, whichever comes first.
func TestUniqueIDsWithAnUnreachableMember(t *testing.T) {
	for _, first := range []bool{true, false} {
		down := &Connection{Ref: Ref{Context: "x", ID: "x", IDSource: IDFromContext}, Err: errors.New("unreachable: connection refused")}
		up := &Connection{Ref: Ref{Context: "member2", ID: "x", IDSource: IDFromProperty}}
		ms := []*Connection{up, down}
		if !first {
			ms = []*Connection{down, up}
		}
		uniqueIDs(ms)
		err := IDErrors(ms)
		if err == nil || !strings.Contains(err.Error(), `cluster ID "x" is also the ID of context "x"`) || !strings.Contains(err.Error(), `context "member2"`) {
			t.Errorf("reachable member listed first: %v: clash reported as %v", first, err)
		}
		if !strings.HasPrefix(down.Err.Error(), "unreachable") {
			t.Errorf("the unreachable member's error became %v", down.Err)
		}
	}
}

func TestIDErrors(t *testing.T) {
	m := &Connection{Ref: Ref{"ctx", "west", IDFromFlag}}
	m.Err = m.AdoptID("east")
	other := &Connection{Ref: Ref{Context: "down", ID: "down"}, Err: errors.New("unreachable: refused")}
	if err := IDErrors([]*Connection{other}); err != nil {
		t.Fatalf("an outage is not an ID error: %v", err)
	}
	err := IDErrors([]*Connection{other, m})
	if err == nil || !strings.Contains(err.Error(), `cluster "west" (context "ctx")`) || !strings.Contains(err.Error(), `"east"`) {
		t.Fatalf("err = %v", err)
	}
}
