package engine

import (
	"reflect"
	"testing"
)

// The reachable members without the namespace of a service exported validly elsewhere: sync's
// report names them.
func TestUnimportable(t *testing.T) {
	k := nn("demo", "serve")
	noNS := func(id string) ObservedCluster {
		c := member(id)
		c.Namespaces = []string{"default"}
		return c
	}
	down := noNS("member4")
	down.Reachable = false
	obs := Observed{Clusters: []ObservedCluster{member("member1", mkService("demo", "serve"), mkExport("demo", "serve", 0)), noNS("member3"), noNS("member2"), down}}
	if got := Unimportable(obs, k); !reflect.DeepEqual(got, []string{"member2", "member3"}) {
		t.Errorf("unimportable %v, want member2, member3", got)
	}
	obs.Clusters[0].Services = nil // the export is not valid: nothing to import
	if got := Unimportable(obs, k); got != nil {
		t.Errorf("unimportable %v without a valid export", got)
	}
	want := `not imported in "member2", "member3": they have no namespace "demo" (a service is imported only where its namespace exists)`
	if got := NoNamespaceMessage("demo", []string{"member2", "member3"}); got != want {
		t.Errorf("message %q", got)
	}
}
