package diagnose

import (
	"fmt"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

func TestAdoptIDs(t *testing.T) {
	ctxRef := func(c string) clusterset.Ref {
		return clusterset.Ref{Context: c, ID: c, IDSource: clusterset.IDFromContext}
	}
	flagRef := func(c, id string) clusterset.Ref {
		return clusterset.Ref{Context: c, ID: id, IDSource: clusterset.IDFromFlag}
	}
	prop := func(id string) Cluster {
		if id == "" {
			return Cluster{}
		}
		return Cluster{ClusterProperties: map[string]string{PropertyClusterID: id}}
	}
	for _, c := range []struct {
		name  string
		refs  []clusterset.Ref
		props []Cluster
		want  string // ID/source per member
	}{
		{"a property names a context-named member", []clusterset.Ref{ctxRef("a"), ctxRef("b")}, []Cluster{prop("east"), prop("")},
			"[east/clusterproperty b/context]"},
		{"a property agrees with --contexts", []clusterset.Ref{flagRef("a", "east")}, []Cluster{prop("east")},
			"[east/clusterproperty]"},
		{"a property disagrees with --contexts", []clusterset.Ref{flagRef("a", "east")}, []Cluster{prop("west")},
			"[east/flag]"},
		{"an invalid property", []clusterset.Ref{ctxRef("a")}, []Cluster{prop("Not_An_ID")},
			"[a/context]"},
		{"a property claims another member's ID", []clusterset.Ref{ctxRef("member1"), ctxRef("member2")}, []Cluster{prop(""), prop("member1")},
			"[member1/context member2/context]"},
		{"two properties claim one ID", []clusterset.Ref{ctxRef("a"), ctxRef("b"), ctxRef("c")}, []Cluster{prop("east"), prop("east"), prop("west")},
			"[a/context b/context west/clusterproperty]"},
		{"two members swap names", []clusterset.Ref{ctxRef("a"), ctxRef("b")}, []Cluster{prop("b"), prop("a")},
			"[b/clusterproperty a/clusterproperty]"},
	} {
		var members []*clusterset.Connection
		for _, r := range c.refs {
			members = append(members, &clusterset.Connection{Ref: r})
		}
		adoptIDs(members, c.props)
		var got []string
		for _, m := range members {
			got = append(got, m.ID+"/"+m.IDSource)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
}
