//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// importReady is the Ready condition of the ServiceImport ns/name in c: status/reason, its
// message and transition time ("" when there is none).
func importReady(t *testing.T, c, ns, name string) (cond, message, since string) {
	t.Helper()
	si := get(t, c, siGVR("v1beta1"), ns, name)
	if si == nil {
		t.Fatalf("%s: no ServiceImport %s/%s", c, ns, name)
	}
	conds, _, _ := unstructured.NestedSlice(si.Object, "status", "conditions")
	for _, x := range conds {
		if m := x.(map[string]any); m["type"] == "Ready" {
			return m["status"].(string) + "/" + m["reason"].(string), m["message"].(string), m["lastTransitionTime"].(string)
		}
	}
	return "", "", ""
}

// After a sync every member's import carries Ready, reason Ready, and a second sync writes nothing.
func TestImportReadyEverywhere(t *testing.T) {
	ns := namespace(t, "e2e-si-ready", members...)
	deployment(t, "member1", ns, "serve", 1)
	service(t, "member1", ns, "serve")
	waitFor(t, "member1's endpoints", func() bool { return len(sourceIPs(t, "member1", ns, "serve")) == 1 })
	hl := service(t, "member2", ns, "db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	userExport(t, "member1", ns, "serve")
	userExport(t, "member2", ns, hl.Name)
	syncSettles(t, "-n", ns, "--contexts", allMembers)
	for _, c := range members {
		for _, name := range []string{"serve", "db"} {
			if got, msg, _ := importReady(t, c, ns, name); got != "True/Ready" {
				t.Errorf("%s: import %s Ready %q (%s), want True/Ready", c, name, got, msg)
			}
		}
	}
}

// An IPv6-only export into an IPv4-only member: that member refuses the derived Service, and its
// import says IPFamilyNotSupported, in the first sync already; the dual-stack exporter's own
// import is Ready. A later sync (a new process, not told of the refusal yet) leaves the condition
// as it is, and status shows it.
func TestImportReadyIPFamilyNotSupported(t *testing.T) {
	if dualStack == "" {
		t.Skip("no dual-stack member in this test bed")
	}
	ns := namespace(t, "e2e-si-v6", dualStack, "member1")
	deployment(t, dualStack, ns, "serve", 1)
	single := corev1.IPFamilyPolicySingleStack
	service(t, dualStack, ns, "serve", func(s *corev1.Service) {
		s.Spec.IPFamilyPolicy, s.Spec.IPFamilies = &single, []corev1.IPFamily{corev1.IPv6Protocol}
	})
	userExport(t, dualStack, ns, "serve")
	contexts := dualStack + ",member1"
	// The refusal is an error of the sync (exit 1), as any write the apiserver refuses.
	r := mcs("sync", "-n", ns, "--contexts", contexts)
	if r.code == 0 || !strings.Contains(r.stderr, "not configured on this cluster") {
		t.Fatalf("sync: exit %d, want the member's refusal\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	got, msg, since := importReady(t, "member1", ns, "serve")
	if got != "False/IPFamilyNotSupported" || !strings.Contains(msg, "IPv6") {
		t.Errorf("member1: import Ready %q (%s), want False/IPFamilyNotSupported naming IPv6", got, msg)
	}
	if got, msg, _ := importReady(t, dualStack, ns, "serve"); got != "True/Ready" {
		t.Errorf("%s: import Ready %q (%s), want True/Ready", dualStack, got, msg)
	}
	before := get(t, "member1", siGVR("v1beta1"), ns, "serve").GetResourceVersion()
	if r := mcs("sync", "-n", ns, "--contexts", contexts); r.code == 0 || strings.Contains(r.stdout, "ServiceImport") {
		t.Errorf("second sync: exit %d (want the refusal again), wrote an import:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := get(t, "member1", siGVR("v1beta1"), ns, "serve").GetResourceVersion(); after != before {
		t.Errorf("member1's import rewritten by the second sync (resourceVersion %s -> %s)", before, after)
	}
	if got2, _, since2 := importReady(t, "member1", ns, "serve"); got2 != got || since2 != since {
		t.Errorf("member1: Ready %q since %s after the second sync, was %q since %s", got2, since2, got, since)
	}

	out := mustMCS(t, "status", "serve", "-n", ns, "--contexts", contexts).stdout
	for _, want := range []string{"Status:         Degraded", "Import:               IPFamilyNotSupported", "Import Ready:         False (IPFamilyNotSupported): This cluster is not", `The ServiceImport in "member1" is not ready (IPFamilyNotSupported)`} {
		if !strings.Contains(out, want) {
			t.Errorf("status serve lacks %q:\n%s", want, out)
		}
	}
	var l struct {
		Items []struct {
			Clusters []struct {
				Cluster     string `json:"cluster"`
				ImportState string `json:"importState"`
				Import      *struct {
					Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
				} `json:"import"`
			} `json:"clusters"`
		} `json:"items"`
	}
	js := mustMCS(t, "status", "serve", "-n", ns, "--contexts", contexts, "-o", "json").stdout
	if err := json.Unmarshal([]byte(js), &l); err != nil || len(l.Items) != 1 {
		t.Fatalf("status -o json: %v\n%s", err, js)
	}
	for _, c := range l.Items[0].Clusters {
		if c.Cluster != "member1" {
			continue
		}
		if c.ImportState != "IPFamilyNotSupported" || c.Import == nil || len(c.Import.Conditions) != 1 || c.Import.Conditions[0].Reason != "IPFamilyNotSupported" {
			t.Errorf("status -o json, member1: %+v", c)
		}
	}
}
