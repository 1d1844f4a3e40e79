package member

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// propertyServer is a member whose ClusterProperty cluster.clusterset.k8s.io says id, after
// failing fails reads with a 500.
func propertyServer(t *testing.T, id string, fails int32) *clusterset.Connection {
	t.Helper()
	var reads atomic.Int32
	srv := fakeAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/about.k8s.io/v1alpha1/clusterproperties/cluster.clusterset.k8s.io" {
			http.NotFound(w, r)
			return
		}
		if reads.Add(1) <= fails {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":"etcd timeout"}`)
			return
		}
		fmt.Fprintf(w, `{"apiVersion":"about.k8s.io/v1alpha1","kind":"ClusterProperty","metadata":{"name":"cluster.clusterset.k8s.io"},"spec":{"value":%q}}`, id)
	})
	return connection(t, srv)
}

// As connected: the context's name, as --contexts gave it, its property unread (down at start,
// or the read failed).
func asGiven(c *clusterset.Connection, ctx string) *clusterset.Connection {
	c.Ref = clusterset.Ref{Context: ctx, ID: ctx, IDSource: clusterset.IDFromContext}
	c.Given = c.Ref
	return c
}

func joinAll(t *testing.T, ms []*Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, m := range ms {
		go m.Run(ctx)
	}
	Wait(ctx, ms, 10*time.Second)
}

// A member is known by the ID its ClusterProperty says once it joins, though it had none when it
// was connected: whether it did not answer then or the read failed (here twice, as it joins too).
func TestJoinReadsTheClusterID(t *testing.T) {
	m := New([]*clusterset.Connection{asGiven(propertyServer(t, "east", 2), "member3")}, Config{RetryCap: 100 * time.Millisecond})[0]
	if m.ID() != "member3" {
		t.Fatalf("before joining: ID %q", m.ID())
	}
	joinAll(t, []*Cache{m})
	deadline := time.Now().Add(10 * time.Second)
	for !m.State().Joined && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := m.State(); !st.Joined {
		t.Fatalf("not joined: %v", st.Err)
	}
	if m.ID() != "east" || m.IDSource() != clusterset.IDFromProperty || strings.Join(m.FormerIDs(), ",") != "member3" {
		t.Errorf("joined as %q (%s), former %v; want east from its clusterproperty, formerly member3", m.ID(), m.IDSource(), m.FormerIDs())
	}
	if v := m.View(); v.ID != "east" || v.IDSource != clusterset.IDFromProperty {
		t.Errorf("view: %q %q", v.ID, v.IDSource)
	}
}

// A member whose property says the ID of another member does not join, whichever comes first
// and whether or not the other has joined; the error names the other's context.
func TestJoinRefusesAnIDTaken(t *testing.T) {
	down := &clusterset.Connection{Ref: clusterset.Ref{Context: "east", ID: "east", IDSource: clusterset.IDFromContext}}
	for _, order := range []string{"claimer first", "claimer last"} {
		claimer := asGiven(propertyServer(t, "east", 0), "member3")
		conns := []*clusterset.Connection{claimer, down}
		if order == "claimer last" {
			conns = []*clusterset.Connection{down, claimer}
		}
		ms := New(conns, Config{RetryCap: 100 * time.Millisecond})
		joinAll(t, ms)
		c := ms[0]
		if order == "claimer last" {
			c = ms[1]
		}
		st := c.State()
		if st.Joined || !idError(st.Err) || !strings.Contains(st.Err.Error(), `cluster ID "east" is also the ID of context "east"`) || c.ID() != "member3" {
			t.Errorf("%s: joined %v as %q, err %v; want not joined, the clash named", order, st.Joined, c.ID(), st.Err)
		}
	}
}

// Members whose properties swap their context names, or take each other's round a cycle, all
// join under their properties' IDs, though none was read when they were connected: each waits
// for the other's property to be read, not for it to join.
func TestJoinSwappedIDs(t *testing.T) {
	for name, ids := range map[string][]string{"swap": {"west", "east"}, "3-cycle": {"b", "c", "a"}} {
		t.Run(name, func(t *testing.T) {
			contexts := map[string][]string{"swap": {"east", "west"}, "3-cycle": {"a", "b", "c"}}[name]
			var conns []*clusterset.Connection
			for i, ctx := range contexts {
				conns = append(conns, asGiven(propertyServer(t, ids[i], 0), ctx))
			}
			ms := New(conns, Config{RetryCap: 100 * time.Millisecond})
			joinAll(t, ms)
			deadline := time.Now().Add(10 * time.Second)
			for i, m := range ms {
				for !m.State().Joined && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if st := m.State(); !st.Joined || m.ID() != ids[i] {
					t.Errorf("context %s: joined %v as %q (err %v), want joined as %q", contexts[i], st.Joined, m.ID(), st.Err, ids[i])
				}
			}
		})
	}
}
