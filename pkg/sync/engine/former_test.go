package engine

import (
	"reflect"
	"slices"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// renamed is obs with cluster from known as to: its ClusterProperty changed while no sync ran.
func renamed(obs Observed, from, to string) Observed {
	out := cloneObs(obs)
	for i := range out.Clusters {
		if out.Clusters[i].ID == from {
			out.Clusters[i].ID = to
		}
	}
	out.Members = nil
	for _, c := range out.Clusters {
		out.Members = append(out.Members, c.ID)
	}
	return out
}

// eastExports: east exports serve to m1 and m2, every cluster's identity known, converged.
func eastExports(t *testing.T) Observed {
	t.Helper()
	obs := Observed{Now: now, Members: []string{"east", "m1", "m2"}, Clusters: []ObservedCluster{
		member("east", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "serve-a", "10.3.0.1")),
		member("m1"), member("m2"),
	}}
	for i := range obs.Clusters {
		obs.Clusters[i].UID = "uid-" + obs.Clusters[i].ID
	}
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatalf("did not converge: %q", summary(left))
	}
	return obs
}

// The imports record each cluster they name with its identity: a read one's own, an unread one's
// as recorded; none when none is known.
func TestImportsRecordTheSourcesIdentity(t *testing.T) {
	obs := eastExports(t)
	for _, c := range obs.Clusters {
		if got := c.ServiceImports[0].Annotations[names.SourceClusterUIDsAnnotation]; got != "east=uid-east" {
			t.Errorf("%s: import records %q, want east=uid-east", c.ID, got)
		}
	}
	// m2 exports too, its identity unknown: not recorded, east's still is.
	obs.Clusters[2].UID = ""
	obs.Clusters[2].Services = append(obs.Clusters[2].Services, mkService("demo", "serve"))
	obs.Clusters[2].ServiceExports = append(obs.Clusters[2].ServiceExports, mkExport("demo", "serve", 1))
	if got := findImport(Compute(obs).Clusters["m1"], "demo", "serve").Annotations[names.SourceClusterUIDsAnnotation]; got != "east=uid-east" {
		t.Errorf("m2's identity unknown: %q, want east=uid-east", got)
	}
	// east unread: what m1's import recorded of it stands.
	unread := without(obs, "east")
	imp := findImport(Compute(unread).Clusters["m1"], "demo", "serve")
	if got := imp.Annotations[names.SourceClusterUIDsAnnotation]; got != "east=uid-east" {
		t.Errorf("east unread: %q, want east=uid-east", got)
	}
	if got := imp.Status.Clusters; len(got) != 2 {
		t.Errorf("east unread: import names %v, want east and m2", got)
	}
	// Nobody's identity known (a sync before this record existed): no annotation at all.
	none := cloneObs(obs)
	for i := range none.Clusters {
		none.Clusters[i].UID = ""
	}
	if got, ok := findImport(Compute(none).Clusters["m1"], "demo", "serve").Annotations[names.SourceClusterUIDsAnnotation]; ok {
		t.Errorf("no identity known: import records %q", got)
	}
}

// east's ID becomes west while no sync ran. The imports' record makes east west's former ID: its
// copies are held, not as a stranger's, until the caller evicts it, once west's copies are
// written; then they go, and the imports name west alone. Before, east stood as a cluster outside
// the clusterset for good.
func TestFormerIDFoundFromTheImportsRecord(t *testing.T) {
	obs := renamed(eastExports(t), "east", "west")
	if got := FormerIDs(obs); !reflect.DeepEqual(got, map[string]string{"east": "west"}) {
		t.Fatalf("FormerIDs %v, want east: west", got)
	}
	d := Compute(obs)
	for _, id := range []string{"m1", "m2", "west"} {
		held := d.Clusters[id].Held
		if len(held) != 1 || held[0].Source != "east" || held[0].Outside {
			t.Errorf("%s: held %+v, want east's copy, not as outside the clusterset", id, held)
		}
	}
	acts := Plan(obs, d)
	if del := verbs(acts, "delete"); len(del) != 0 {
		t.Errorf("east's copies deleted before west's are written: %q", del)
	}
	westCopy := names.EndpointSliceName("serve", "west", "serve-a")
	if !slices.Contains(summary(acts), "m1 create EndpointSlice demo/"+westCopy) {
		t.Errorf("west's copy not written in m1: %q", summary(acts))
	}
	apply(&obs, acts)

	obs.Evicted = []string{"east"} // west's copies are there: the caller lets east go
	acts = Plan(obs, Compute(obs))
	eastCopy := names.EndpointSliceName("serve", "east", "serve-a")
	if got, want := verbs(acts, "delete"), []string{"m1 delete EndpointSlice demo/" + eastCopy, "m2 delete EndpointSlice demo/" + eastCopy, "west delete EndpointSlice demo/" + eastCopy}; !reflect.DeepEqual(got, want) {
		t.Errorf("deletes %q, want %q", got, want)
	}
	// The reconciler writes the imports a round before the deletes: while m1 holds east's copy,
	// its import still records east's identity, or a restart then would strand the copy.
	var imports []Action
	for _, a := range acts {
		if a.Kind == snapshot.KindServiceImport {
			imports = append(imports, a)
		}
	}
	apply(&obs, imports)
	if got := findImport(Compute(obs).Clusters["m1"], "demo", "serve").Annotations[names.SourceClusterUIDsAnnotation]; got != "east=uid-east,west=uid-east" {
		t.Errorf("m1 still holds east's copy: its import records %q, want east's identity still", got)
	}
	restarted := cloneObs(obs)
	restarted.Evicted = nil
	if got := FormerIDs(restarted); !reflect.DeepEqual(got, map[string]string{"east": "west"}) {
		t.Errorf("m1 still holds east's copy: FormerIDs %v, want east: west", got)
	}
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatalf("did not converge: %q", summary(left))
	}
	for _, c := range obs.Clusters {
		imp := c.ServiceImports[0]
		if got := imp.Annotations[names.SourceClusterUIDsAnnotation]; got != "west=uid-east" || len(imp.Status.Clusters) != 1 || imp.Status.Clusters[0].Cluster != "west" {
			t.Errorf("%s: import names %v, records %q; want west alone", c.ID, imp.Status.Clusters, got)
		}
	}
	obs.Evicted = nil
	if got := FormerIDs(obs); len(got) != 0 {
		t.Errorf("nothing left under east, FormerIDs still %v", got)
	}
}

// An ID is former only on a sure record: a member's, an identity no read cluster has, or one two
// read clusters share, or records that disagree, make none; so does an unknown membership.
func TestFormerIDsOnlyOnASureRecord(t *testing.T) {
	base := renamed(eastExports(t), "east", "west")
	cases := map[string]func(*Observed){
		"east is a member still (unread)": func(o *Observed) { o.Members = append(slices.Clone(o.Members), "east") },
		"membership unknown":              func(o *Observed) { o.Members = nil },
		"identity of no read cluster":     func(o *Observed) { o.Clusters[0].UID = "uid-other" },
		"west's identity unknown":         func(o *Observed) { o.Clusters[0].UID = "" },
		"west unread":                     func(o *Observed) { *o = without(*o, "west") },
		"identity shared by two clusters": func(o *Observed) { o.Clusters[1].UID = "uid-east" },
		"records disagree": func(o *Observed) {
			o.Clusters[0].ServiceImports[0].Annotations[names.SourceClusterUIDsAnnotation] = "east=uid-m1"
		},
		"the record is not ours": func(o *Observed) {
			for i := range o.Clusters {
				delete(o.Clusters[i].ServiceImports[0].Labels, names.ManagedByLabel)
			}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			obs := cloneObs(base)
			mutate(&obs)
			if got := FormerIDs(obs); len(got) != 0 {
				t.Errorf("FormerIDs %v, want none", got)
			}
			if name == "the record is not ours" {
				return // an import not ours: nothing is imported there, whatever the IDs
			}
			if del := verbs(Plan(obs, Compute(obs)), "delete"); len(del) != 0 {
				t.Errorf("east's records deleted: %q", del)
			}
		})
	}
	// Outside the clusterset, and said so, when its identity is no read member's.
	obs := cloneObs(base)
	obs.Clusters[0].UID = "uid-other"
	for _, h := range Compute(obs).Clusters["m1"].Held {
		if !h.Outside {
			t.Errorf("east, recorded with an identity no member has: held %+v, want outside", h)
		}
	}
}

// Deciding for one cluster (a sync --local, which reads the others without their managed
// objects) records the same identities as deciding for all.
func TestFormerIDsAlikeForOneCluster(t *testing.T) {
	obs := renamed(eastExports(t), "east", "west")
	all := Compute(obs)
	for _, c := range obs.Clusters {
		one := obs
		one.For = c.ID
		narrow := readElsewhere(one)
		if got := FormerIDs(narrow); !reflect.DeepEqual(got, map[string]string{"east": "west"}) {
			t.Errorf("%s alone: FormerIDs %v", c.ID, got)
		}
		if !reflect.DeepEqual(Compute(narrow).Clusters[c.ID], all.Clusters[c.ID]) {
			t.Errorf("%s alone: wants other than deciding for all", c.ID)
		}
	}
}
