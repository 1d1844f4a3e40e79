package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// importReadyIn is the Ready condition desired on demo/NAME's import in cluster id.
func importReadyIn(t *testing.T, obs Observed, id, name string) metav1.Condition {
	t.Helper()
	cd := Compute(obs).Clusters[id]
	if cd == nil {
		t.Fatalf("%s: nothing desired", id)
	}
	si := findImport(cd, "demo", name)
	if si == nil {
		t.Fatalf("%s: no import demo/%s desired", id, name)
	}
	c := meta.FindStatusCondition(si.Status.Conditions, string(mcsv1beta1.ServiceImportConditionReady))
	if c == nil {
		t.Fatalf("%s: import demo/%s has no Ready condition: %+v", id, name, si.Status)
	}
	return *c
}

func observedImport(obs *Observed, id, name string) *mcsv1beta1.ServiceImport {
	for _, c := range obs.Clusters {
		if c.ID == id {
			for _, si := range c.ServiceImports {
				if si.Namespace == "demo" && si.Name == name {
					return si
				}
			}
		}
	}
	return nil
}

func readyOf(si *mcsv1beta1.ServiceImport) *metav1.Condition {
	if si == nil {
		return nil
	}
	return meta.FindStatusCondition(si.Status.Conditions, string(mcsv1beta1.ServiceImportConditionReady))
}

// The import is Pending until the derived Service exists with its cluster IP and the first copies
// are there, then Ready; the whole convergence writes the status of each import twice at most
// (Pending, then Ready), and once converged nothing.
func TestImportReadyPendingThenReady(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("a", mkExport("demo", "web", 1), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.0.0.1")),
		member("b"),
	}}
	if c := importReadyIn(t, obs, "b", "web"); c.Status != metav1.ConditionFalse || c.Reason != string(mcsv1beta1.ServiceImportReasonPending) ||
		!c.LastTransitionTime.Equal(&now) {
		t.Errorf("before anything is written: %+v, want False/Pending at now", c)
	}
	statusWrites := map[string]int{}
	for i := 0; i < 10; i++ {
		acts := Plan(obs, Compute(obs))
		if len(acts) == 0 {
			break
		}
		for _, a := range acts {
			if a.Kind == snapshot.KindServiceImport && a.Verb == VerbStatus {
				statusWrites[a.Cluster]++
			}
		}
		apply(&obs, acts)
	}
	if acts := Plan(obs, Compute(obs)); len(acts) != 0 {
		t.Fatalf("not converged: %v", acts)
	}
	for _, id := range []string{"a", "b"} {
		c := readyOf(observedImport(&obs, id, "web"))
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(mcsv1beta1.ServiceImportReasonReady) {
			t.Errorf("%s: converged import Ready %+v, want True/Ready", id, c)
		}
		if statusWrites[id] > 2 {
			t.Errorf("%s: %d status writes of the import, want at most 2 (Pending, Ready)", id, statusWrites[id])
		}
	}
}

// Each step that is missing keeps the import Pending, with one message; with all of them it is
// Ready. Only the first copies count: a new source slice leaves a Ready import Ready.
func TestImportReadySteps(t *testing.T) {
	exp, svc, slice := mkExport("demo", "web", 1), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.0.0.1")
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("a", exp, svc, slice), member("b")}}
	converge(&obs, 10)
	ready := importReadyIn(t, obs, "b", "web")
	if ready.Reason != string(mcsv1beta1.ServiceImportReasonReady) {
		t.Fatalf("converged: %+v", ready)
	}
	b := &obs.Clusters[1]
	cases := map[string]func(c *ObservedCluster){
		"no derived Service": func(c *ObservedCluster) { c.Services = nil },
		"no cluster IP": func(c *ObservedCluster) {
			s := c.Services[0].DeepCopy()
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
			c.Services = []*corev1.Service{s}
		},
		"no copy": func(c *ObservedCluster) { c.EndpointSlices = nil },
	}
	var msg string
	for name, mutate := range cases {
		o := obs
		o.Clusters = append([]ObservedCluster(nil), obs.Clusters...)
		c := o.Clusters[1]
		c.Objects = snapshot.Objects{Namespaces: b.Namespaces, ServiceImports: b.ServiceImports, Services: b.Services, EndpointSlices: b.EndpointSlices}
		mutate(&c)
		o.Clusters[1] = c
		got := importReadyIn(t, o, "b", "web")
		if got.Status != metav1.ConditionFalse || got.Reason != string(mcsv1beta1.ServiceImportReasonPending) {
			t.Errorf("%s: %+v, want False/Pending", name, got)
		}
		if !got.LastTransitionTime.Equal(&now) {
			t.Errorf("%s: transition time %v, want now (True -> False)", name, got.LastTransitionTime)
		}
		if msg != "" && got.Message != msg {
			t.Errorf("%s: message %q, another step's was %q: each step would write the status", name, got.Message, msg)
		}
		msg = got.Message
	}

	// A second source slice, not copied yet: the first copy is there, the import stays Ready.
	obs.Clusters[0].EndpointSlices = append(obs.Clusters[0].EndpointSlices, mkSlice("demo", "web", "web-2", "10.0.0.2"))
	if got := importReadyIn(t, obs, "b", "web"); got.Reason != string(mcsv1beta1.ServiceImportReasonReady) || !got.LastTransitionTime.Equal(&ready.LastTransitionTime) {
		t.Errorf("new source slice: %+v, want Ready as it was (%v)", got, ready.LastTransitionTime)
	}
}

// A headless import needs no cluster IP: Ready once the derived Service and a copy are there.
// Without source slices there is no copy to wait for.
func TestImportReadyHeadlessAndNoEndpoints(t *testing.T) {
	hl := mkService("demo", "db")
	hl.Spec.ClusterIP = corev1.ClusterIPNone
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("a", mkExport("demo", "db", 1), hl, mkSlice("demo", "db", "db-1", "10.0.0.1"),
			mkExport("demo", "web", 1), mkService("demo", "web")),
		member("b"),
	}}
	converge(&obs, 10)
	for _, name := range []string{"db", "web"} {
		if c := readyOf(observedImport(&obs, "b", name)); c == nil || c.Reason != string(mcsv1beta1.ServiceImportReasonReady) {
			t.Errorf("%s: Ready %+v, want True/Ready", name, c)
		}
	}
	if si := observedImport(&obs, "b", "db"); len(si.Spec.IPs) != 0 {
		t.Errorf("headless import has IPs %v", si.Spec.IPs)
	}
}

// A member not configured for the exported family refuses the derived Service: told so
// (obs.Failing), its import says IPFamilyNotSupported, and keeps saying so in a sync that has not
// tried the write yet; the transition time holds. Once the derived Service is there, Ready.
func TestImportReadyIPFamilyNotSupported(t *testing.T) {
	v6 := mkService("demo", "web")
	v6.Spec.IPFamilies, v6.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv6Protocol}, ptr(corev1.IPFamilyPolicySingleStack)
	imp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", UID: "u-imp",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "kubectl-mcs"}},
		Status: mcsv1beta1.ServiceImportStatus{Clusters: []mcsv1beta1.ClusterStatus{{Cluster: "a"}}}}
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("a", mkExport("demo", "web", 1), v6), member("b", imp)}}
	refused := WriteFailure{Service: nn("demo", "web"), Cluster: "b", Kind: snapshot.KindService, Namespace: "demo", Name: "derived-web",
		Message: `Service "derived-web" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`}

	if c := importReadyIn(t, obs, "b", "web"); c.Reason != string(mcsv1beta1.ServiceImportReasonPending) {
		t.Errorf("before the refusal: %+v, want Pending", c)
	}
	obs.Failing = []WriteFailure{refused}
	c := importReadyIn(t, obs, "b", "web")
	if c.Status != metav1.ConditionFalse || c.Reason != string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported) ||
		!strings.Contains(c.Message, "IPv6") || !strings.Contains(c.Message, "derived-web") {
		t.Fatalf("refused: %+v, want False/IPFamilyNotSupported naming IPv6 and derived-web", c)
	}
	// Another refusal of the same Service is not the family's.
	other := obs
	other.Failing = []WriteFailure{{Service: refused.Service, Cluster: "b", Kind: snapshot.KindService, Namespace: "demo", Name: "derived-web", Message: "admission webhook denied the request"}}
	if c := importReadyIn(t, other, "b", "web"); c.Reason != string(mcsv1beta1.ServiceImportReasonPending) {
		t.Errorf("refused by a webhook: %+v, want Pending", c)
	}

	// Written; a later sync, not told yet (a new process), keeps it with its transition time.
	was := imp.DeepCopy()
	was.Status.Conditions = []metav1.Condition{c}
	was.Status.Conditions[0].LastTransitionTime = at(5)
	obs.Clusters[1] = member("b", was)
	obs.Failing = nil
	if got := importReadyIn(t, obs, "b", "web"); got.Reason != c.Reason || got.Message != c.Message || !got.LastTransitionTime.Equal(ptr(at(5))) {
		t.Errorf("next sync: %+v, want the same condition since %v", got, at(5))
	}
	if acts := Plan(obs, Compute(obs)); hasImportStatus(acts, "b") {
		t.Errorf("next sync rewrites the import's status: %v", acts)
	}
	// In another member (not told), it is a matter of that member's own refusal alone.
	if c := importReadyIn(t, obs, "a", "web"); c.Reason != string(mcsv1beta1.ServiceImportReasonPending) {
		t.Errorf("member a: %+v, want Pending (its own derived Service not there yet)", c)
	}

	// The member is reconfigured: the derived Service is created, and the import turns Ready.
	ds := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "derived-web", UID: "u-d",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "kubectl-mcs"}},
		Spec: corev1.ServiceSpec{ClusterIP: "fd00::1", ClusterIPs: []string{"fd00::1"}, IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol}}}
	obs.Clusters[1] = member("b", was, ds)
	if got := importReadyIn(t, obs, "b", "web"); got.Status != metav1.ConditionTrue || !got.LastTransitionTime.Equal(&now) {
		t.Errorf("derived Service there: %+v, want True/Ready since now", got)
	}
}

// A dual-stack export never makes IPFamilyNotSupported: its derived Service names no family, and
// a single-stack member of either family takes it.
func TestImportReadyDualStackNeverRefusedByFamily(t *testing.T) {
	ds := mkService("demo", "web")
	ds.Spec.IPFamilies, ds.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}, ptr(corev1.IPFamilyPolicyPreferDualStack)
	imp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "kubectl-mcs"}},
		Status: mcsv1beta1.ServiceImportStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse,
			Reason: string(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported), LastTransitionTime: at(1)}}}}
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("a", mkExport("demo", "web", 1), ds), member("b", imp)}}
	if c := importReadyIn(t, obs, "b", "web"); c.Reason != string(mcsv1beta1.ServiceImportReasonPending) || !c.LastTransitionTime.Equal(ptr(at(1))) {
		t.Errorf("%+v, want Pending (the stale IPFamilyNotSupported not kept), transition time kept (False both)", c)
	}
}

// A served schema without status.conditions (the v0.1.0-era v1alpha1 CRDs) gets none, and its
// import is not rewritten for want of one.
func TestImportReadyNotWrittenWithoutConditionsInTheSchema(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		member("a", mkExport("demo", "web", 1), mkService("demo", "web"), mkSlice("demo", "web", "web-1", "10.0.0.1")),
		member("b"),
	}}
	obs.Clusters[1].ImportSchema = dropConditions{}
	if n, acts := converge(&obs, 10); len(acts) != 0 {
		t.Fatalf("not converged after %d passes: %v", n, acts)
	}
	if si := observedImport(&obs, "b", "web"); si == nil || len(si.Status.Conditions) != 0 || len(si.Status.Clusters) != 1 {
		t.Errorf("import in b: %+v, want status.clusters alone", si)
	}
}

// dropConditions is a served ServiceImport schema whose status holds clusters only.
type dropConditions struct{}

func (dropConditions) Prune(obj map[string]any) []string {
	st, _ := obj["status"].(map[string]any)
	if _, ok := st["conditions"]; !ok {
		return nil
	}
	delete(st, "conditions")
	return []string{"status.conditions"}
}

func hasImportStatus(acts []Action, cluster string) bool {
	for _, a := range acts {
		if a.Cluster == cluster && a.Kind == snapshot.KindServiceImport && a.Verb == VerbStatus {
			return true
		}
	}
	return false
}
