//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var cpGVR = schema.GroupVersionResource{Group: "about.k8s.io", Version: "v1alpha1", Resource: "clusterproperties"}

func property(t *testing.T, c, name string) string {
	t.Helper()
	u, err := clients[c].dyn.Resource(cpGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: clusterproperty %s: %v", c, name, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "value")
	return v
}

func TestClusterPropertyIDs(t *testing.T) {
	// The properties outlive no test: every other test knows member1 as "member1".
	t.Cleanup(func() {
		for _, c := range []string{"member1", "member2"} {
			for _, n := range []string{"cluster.clusterset.k8s.io", "clusterset.k8s.io"} {
				_ = clients[c].dyn.Resource(cpGVR).Delete(context.Background(), n, metav1.DeleteOptions{})
			}
		}
	})
	r := mustMCS(t, "init", "--contexts", "member1=east,member2", "--clusterset", "e2e-set")
	if !strings.Contains(r.stdout, "east: clusterproperty.about.k8s.io/cluster.clusterset.k8s.io created") {
		t.Errorf("init output:\n%s", r.stdout)
	}
	for c, id := range map[string]string{"member1": "east", "member2": "member2"} {
		if got := property(t, c, "cluster.clusterset.k8s.io"); got != id {
			t.Errorf("%s: cluster.clusterset.k8s.io = %q, want %q", c, got, id)
		}
		if got := property(t, c, "clusterset.k8s.io"); got != "e2e-set" {
			t.Errorf("%s: clusterset.k8s.io = %q", c, got)
		}
	}

	// Without CTX=ID, member1 is known by its property.
	r = mustMCS(t, "status", "--contexts", "member1,member2", "-o", "json")
	var l struct {
		Clusters []struct{ Name, Context, IDSource string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Clusters) != 2 || l.Clusters[0].Name != "east" || l.Clusters[0].IDSource != "clusterproperty" || l.Clusters[0].Context != "member1" {
		t.Errorf("status clusters %+v", l.Clusters)
	}

	// sync labels the slices it copies with that ID.
	ns := namespace(t, "e2e-cp", "member1", "member2")
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member1,member2")
	mustMCS(t, "sync", "-n", ns, "--contexts", "member1,member2")
	if got, want := importedIPs(t, "member2", ns, "serve", "east"), podIPs(t, "member1", ns, "serve"); len(got) != 1 || got[0] != want[0] {
		t.Errorf("member2: slices labelled source-cluster=east hold %v, want %v", got, want)
	}
	if r := mustMCS(t, "status", "-n", ns, "--contexts", "member1,member2", "-o", "wide"); !strings.Contains(r.stdout, "east=clusterproperty,member2=clusterproperty") {
		t.Errorf("status -o wide lacks where the IDs came from:\n%s", r.stdout)
	}

	// An explicit ID that disagrees is an error naming both.
	r = mcs("sync", "-n", ns, "--contexts", "member1=west,member2=member2")
	r2 := mcs("expose", "serve", "-n", ns, "--contexts", "member1=west,member2")
	for _, res := range []result{r, r2} {
		if res.code != 1 || !strings.Contains(res.stderr, `"west"`) || !strings.Contains(res.stderr, `"east"`) {
			t.Errorf("a disagreeing CTX=ID must fail naming both values: %d\n%s", res.code, res.stderr)
		}
	}
}
