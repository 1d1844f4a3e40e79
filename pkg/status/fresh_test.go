package status

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// changedAt stamps s as its controller last changing it at minute min.
func changedAt(s *discoveryv1.EndpointSlice, min int) *discoveryv1.EndpointSlice {
	t := at(min)
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Time: &t}}
	return s
}

// staleSeed is the seed clusterset after sync wrote the copies of old (minute 10) and member1's
// slice changed to src (minute 30), with no sync since.
func staleSeed(old, src *discoveryv1.EndpointSlice) []snapshot.Cluster {
	cp := changedAt(copyOf(old, "serve", "member1"), 10)
	imports := func(ip string) []any {
		return []any{serviceImport("demo", "serve", mcsv1beta1.ClusterSetIP, ip, "member1"), derived("demo", "serve", ip), cp.DeepCopy()}
	}
	return []snapshot.Cluster{
		cluster("member1", append([]any{export("demo", "serve", 1), service("demo", "serve", false), changedAt(src, 30)}, imports("10.96.0.1")...)...),
		cluster("member2", imports("10.96.0.2")...),
		cluster("member3", imports("10.96.0.3")...),
	}
}

func copiesIn(t *testing.T, it MultiClusterServiceStatus, id string) []CopiesStatus {
	t.Helper()
	for _, c := range it.Clusters {
		if c.Cluster == id {
			return c.Copies
		}
	}
	t.Fatalf("no cluster %q", id)
	return nil
}

// staleProblem is the one problem about stale copies, which must name the source and every member.
func staleProblem(t *testing.T, it MultiClusterServiceStatus) string {
	t.Helper()
	if it.Health != Degraded {
		t.Errorf("health %s, want Degraded: %v", it.Health, it.Problems)
	}
	var found []string
	for _, p := range it.Problems {
		if strings.Contains(p, "out of date") {
			found = append(found, p)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], `The copies of "member1"'s endpoints in "member1", "member2", "member3" are out of date: `) {
		t.Fatalf("want one problem naming the source and the members, got %q", it.Problems)
	}
	return found[0]
}

func TestFreshCopiesHealthy(t *testing.T) {
	src := slice("demo", "serve", "serve-abc", true, true)
	it := only(t, Build(staleSeed(src, src.DeepCopy())))
	if it.Health != Healthy || len(it.Problems) != 0 {
		t.Fatalf("health %s, problems %v", it.Health, it.Problems)
	}
	for _, id := range []string{"member1", "member2", "member3"} {
		if got := copiesIn(t, it, id); !reflect.DeepEqual(got, []CopiesStatus{{Source: "member1", State: CopiesFresh}}) {
			t.Errorf("%s: copies %+v", id, got)
		}
	}
}

// Sync scaled to 0, then the source scaled from 0 to 2: the copies hold no endpoint.
func TestCopiesMissingEndpoints(t *testing.T) {
	it := only(t, Build(staleSeed(slice("demo", "serve", "serve-abc"), slice("demo", "serve", "serve-abc", true, true))))
	p := staleProblem(t, it)
	if !strings.Contains(p, "2 endpoints missing (10.1.0.1; 10.1.0.2); since 2025-01-01T00:30:00Z, the source slice's last change (managedFields).") {
		t.Errorf("problem %q", p)
	}
	c := copiesIn(t, it, "member3")
	since := at(30)
	want := []CopiesStatus{{Source: "member1", State: CopiesStale, Slices: []string{copyOf(slice("demo", "serve", "serve-abc"), "serve", "member1").Name},
		Missing: []string{"10.1.0.1", "10.1.0.2"}, Since: &since, SinceFrom: SinceSourceChanged}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("copies %+v\nwant %+v", c, want)
	}
}

func TestCopiesFiveAgainstThree(t *testing.T) {
	it := only(t, Build(staleSeed(slice("demo", "serve", "serve-abc", true, true, true), slice("demo", "serve", "serve-abc", true, true, true, true, true))))
	if p := staleProblem(t, it); !strings.Contains(p, ": 2 endpoints missing (10.1.0.4; 10.1.0.5); since") {
		t.Errorf("problem %q", p)
	}
}

func TestCopiesEndpointInAnotherState(t *testing.T) {
	it := only(t, Build(staleSeed(slice("demo", "serve", "serve-abc", false, true), slice("demo", "serve", "serve-abc", true, true))))
	p := staleProblem(t, it)
	if !strings.Contains(p, ": 1 endpoint in another state (10.1.0.1: ready=true in the source, ready=false in the copy); since") {
		t.Errorf("problem %q", p)
	}
	if c := copiesIn(t, it, "member2")[0]; len(c.OtherState) != 1 || c.OtherState[0] != (EndpointChange{Addresses: "10.1.0.1", Source: "ready=true", Copy: "ready=false"}) || len(c.Missing)+len(c.Extra) != 0 {
		t.Errorf("copies %+v", c)
	}
}

func TestCopiesExtraEndpoint(t *testing.T) {
	it := only(t, Build(staleSeed(slice("demo", "serve", "serve-abc", true, true, true), slice("demo", "serve", "serve-abc", true, true))))
	if p := staleProblem(t, it); !strings.Contains(p, ": 1 endpoint extra (10.1.0.3); since 2025-01-01T00:30:00Z") {
		t.Errorf("problem %q", p)
	}
}

// A copy whose source slice is gone, the source read: its endpoints are extra, and since when is
// bounded by the copy's last write.
func TestCopyWithoutSourceSlice(t *testing.T) {
	cs := staleSeed(slice("demo", "serve", "serve-old", true), slice("demo", "serve", "serve-new", true, true))
	it := only(t, Build(cs))
	// The old copy held 10.1.0.1, which the new slice holds too: only 10.1.0.2 is missing.
	if p := staleProblem(t, it); !strings.Contains(p, ": 1 endpoint missing (10.1.0.2); since after 2025-01-01T00:10:00Z, the last change of a copy whose source slice is gone (managedFields).") {
		t.Errorf("problem %q", p)
	}
	if c := copiesIn(t, it, "member2")[0]; !reflect.DeepEqual(c.Missing, []string{"10.1.0.2"}) || len(c.Extra) != 0 || len(c.Slices) != 2 || c.SinceFrom != SinceSourceGoneAfter {
		t.Errorf("copies %+v", c)
	}
}

// A source that cannot be read is not a stale copy: its copies stand by design.
func TestUnreadSourceIsNotStale(t *testing.T) {
	for _, state := range []snapshot.State{snapshot.Unreachable, snapshot.Error} {
		cs := staleSeed(slice("demo", "serve", "serve-abc"), slice("demo", "serve", "serve-abc", true, true))
		cs[0] = snapshot.Cluster{ID: "member1", Context: "member1", State: state}
		it := only(t, Build(cs))
		for _, p := range it.Problems {
			if strings.Contains(p, "out of date") {
				t.Errorf("%s: %q", state, p)
			}
		}
		if c := copiesIn(t, it, "member2"); !reflect.DeepEqual(c, []CopiesStatus{{Source: "member1", State: CopiesUnread}}) {
			t.Errorf("%s: copies %+v", state, c)
		}
	}
	// Outside this read (--contexts): Unknown, as before, never Degraded.
	cs := staleSeed(slice("demo", "serve", "serve-abc"), slice("demo", "serve", "serve-abc", true, true))[1:]
	if it := only(t, Build(cs)); it.Health != Unknown || !reflect.DeepEqual(copiesIn(t, it, "member3"), []CopiesStatus{{Source: "member1", State: CopiesUnread}}) {
		t.Errorf("health %s %v, copies %+v", it.Health, it.Problems, copiesIn(t, it, "member3"))
	}
}

// Only what sync would change is stale: a copy stays fresh when its source gains what sync does
// not copy (nodeName) or a port the service does not carry.
func TestCopiesComparedAsSyncDoes(t *testing.T) {
	old := slice("demo", "serve", "serve-abc", true)
	old.Ports = []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr[int32](80)}}
	now := old.DeepCopy()
	now.Endpoints[0].NodeName = ptr("node-2")
	now.Ports = append(now.Ports, discoveryv1.EndpointPort{Name: ptr("metrics"), Port: ptr[int32](9090)})
	if it := only(t, Build(staleSeed(old, now))); it.Health != Healthy {
		t.Errorf("health %s: %v", it.Health, it.Problems)
	}
	now.Ports[0].Port = ptr[int32](8080)
	if p := staleProblem(t, only(t, Build(staleSeed(old, now)))); !strings.Contains(p, ": other ports; since") {
		t.Errorf("problem %q", p)
	}
}

// The description marks the stale source among each member's imported endpoints.
func TestDescribeStaleCopies(t *testing.T) {
	l := Build(staleSeed(slice("demo", "serve", "serve-abc"), slice("demo", "serve", "serve-abc", true, true)))
	var b bytes.Buffer
	if err := Describe(&b, l, l.Items[0], PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Status:         Degraded\n", "Problems:\n  The copies of \"member1\"'s endpoints in \"member1\", \"member2\",",
		"    Imported endpoints:   member1=0/0(out of date)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, b.String())
		}
	}
}
