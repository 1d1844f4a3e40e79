package engine

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// TestSummarizeAgreesWithCompute: for random clustersets, Summarize reports exactly Compute's
// conflicts, the type and ports of Compute's ServiceImports, and Compute's Valid=False exports.
func TestSummarizeAgreesWithCompute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var nConflicts, nImports, nInvalid int
	for i := 0; i < 2000; i++ {
		b := make([]byte, 64)
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		obs := genObserved(b)
		// Every cluster reachable, so that Compute decides a Valid condition for every export.
		for c := range obs.Clusters {
			obs.Clusters[c].Reachable = true
		}
		want := Compute(obs)
		got := Summarize(obs)

		nConflicts += len(want.Conflicts)
		var conflicts []Conflict
		byKey := map[key]Summary{}
		for _, s := range got {
			conflicts = append(conflicts, s.Conflicts...)
			byKey[key{Namespace: s.Namespace, Name: s.Name}] = s
		}
		if len(conflicts) != len(want.Conflicts) || (len(conflicts) > 0 && !reflect.DeepEqual(conflicts, want.Conflicts)) {
			t.Fatalf("input %x: conflicts\n got %+v\nwant %+v", b, conflicts, want.Conflicts)
		}
		for id, cd := range want.Clusters {
			for _, si := range cd.ServiceImports {
				s, ok := byKey[key{Namespace: si.Namespace, Name: si.Name}]
				if len(si.Status.Clusters) > 0 && namesRead(obs, si) == 0 {
					continue // held for unread clusters only (genObserved's former ID): nothing read exports it
				}
				if !ok || s.Type != si.Spec.Type || !reflect.DeepEqual(s.Ports, si.Spec.Ports) {
					t.Fatalf("input %x: %s %s/%s: summary %+v, import spec %+v", b, id, si.Namespace, si.Name, s, si.Spec)
				}
				nImports++
				if len(s.Exporting) != namesRead(obs, si) { // the unread clusters it names stand as well
					t.Fatalf("input %x: exporting %v, import clusters %v", b, s.Exporting, si.Status.Clusters)
				}
			}
			for k, conds := range cd.ExportConditions {
				valid := meta.FindStatusCondition(conds, string(mcsv1beta1.ServiceExportConditionValid))
				s := byKey[k]
				var inv *InvalidExport
				for i := range s.Invalid {
					if s.Invalid[i].Cluster == id {
						inv = &s.Invalid[i]
					}
				}
				if inv != nil {
					nInvalid++
				}
				if (valid.Status == "False") != (inv != nil) || (inv != nil && (inv.Reason != valid.Reason || inv.Message != valid.Message)) {
					t.Fatalf("input %x: %s %s: Valid %+v, summary invalid %+v", b, id, k, valid, inv)
				}
			}
		}
	}
	if nConflicts == 0 || nImports == 0 || nInvalid == 0 {
		t.Errorf("the generator produced %d conflicts, %d imports, %d invalid exports: the test proves nothing", nConflicts, nImports, nInvalid)
	}
	t.Logf("compared %d conflicts, %d imports, %d invalid exports", nConflicts, nImports, nInvalid)
}

func TestSummarizeOldestWins(t *testing.T) {
	e1, e2 := mkExport("demo", "web", 5), mkExport("demo", "web", 1)
	headless := mkService("demo", "web")
	headless.Spec.ClusterIP = "None"
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("member1", e1, mkService("demo", "web")),
		member("member2", e2, headless),
		member("member3", mkExport("demo", "web", 0)), // no Service
	}}
	got := Summarize(obs)
	if len(got) != 1 {
		t.Fatalf("got %d summaries", len(got))
	}
	s := got[0]
	if s.Type != mcsv1beta1.Headless || !reflect.DeepEqual(s.Exporting, []string{"member2", "member1"}) {
		t.Errorf("type %q exporting %v", s.Type, s.Exporting)
	}
	if len(s.Conflicts) != 1 || s.Conflicts[0].Reason != string(mcsv1beta1.ServiceExportReasonTypeConflict) || s.Conflicts[0].Winner != "member2" {
		t.Errorf("conflicts %+v", s.Conflicts)
	}
	if len(s.Invalid) != 1 || s.Invalid[0].Cluster != "member3" || s.Invalid[0].Reason != string(mcsv1beta1.ServiceExportReasonNoService) {
		t.Errorf("invalid %+v", s.Invalid)
	}
}

// namesRead is how many of the clusters an import names were read.
func namesRead(obs Observed, si *mcsv1beta1.ServiceImport) int {
	n := 0
	for _, st := range si.Status.Clusters {
		for _, c := range obs.Clusters {
			if c.ID == st.Cluster {
				n++
			}
		}
	}
	return n
}
