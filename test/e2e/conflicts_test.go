//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// TestSyncConflictKinds exports one service from member1 (oldest) and member2 (newer) that differ
// in one property at a time. For every conflict kind of SPEC 4 the table names the reason and
// member1 as winner, both exports carry the Conflict condition, and the import in member3 takes
// member1's value.
func TestSyncConflictKinds(t *testing.T) {
	headless := func(fam corev1.IPFamily) func(*corev1.Service) {
		return func(s *corev1.Service) {
			s.Spec.Selector = nil
			s.Spec.ClusterIP = corev1.ClusterIPNone
			s.Spec.IPFamilies = []corev1.IPFamily{fam}
			s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		}
	}
	clientIP := func(timeout int32) func(*corev1.Service) {
		return func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To(timeout)}}
		}
	}
	cases := []struct {
		reason         string
		older, newer   func(*corev1.Service)
		olderX, newerX map[string]any // ServiceExport spec
		// field of the import in member3 and the value it must have (member1's)
		field []string
		want  string
	}{
		{reason: "PortConflict",
			newer: func(s *corev1.Service) { s.Spec.Ports[0].Name = "web" },
			field: []string{"spec", "ports"}, want: `[map[port:80 protocol:TCP]]`},
		{reason: "SessionAffinityConflict",
			older: clientIP(600),
			field: []string{"spec", "sessionAffinity"}, want: "ClientIP"},
		{reason: "SessionAffinityConfigConflict",
			older: clientIP(600), newer: clientIP(30),
			field: []string{"spec", "sessionAffinityConfig", "clientIP", "timeoutSeconds"}, want: "600"},
		{reason: "InternalTrafficPolicyConflict",
			older: func(s *corev1.Service) {
				s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
			},
			field: []string{"spec", "internalTrafficPolicy"}, want: "Local"},
		{reason: "TrafficDistributionConflict",
			older: func(s *corev1.Service) {
				s.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferSameZone)
			},
			field: []string{"spec", "trafficDistribution"}, want: "PreferSameZone"},
		{reason: "IPFamilyConflict",
			older: headless(corev1.IPv4Protocol), newer: headless(corev1.IPv6Protocol),
			field: []string{"spec", "ipFamilies"}, want: "[IPv4]"},
		{reason: "LabelsConflict",
			olderX: map[string]any{"exportedLabels": map[string]any{"tier": "gold"}},
			newerX: map[string]any{"exportedLabels": map[string]any{"tier": "silver"}},
			field:  []string{"metadata", "labels", "tier"}, want: "gold"},
		{reason: "AnnotationsConflict",
			olderX: map[string]any{"exportedAnnotations": map[string]any{"owner": "team-a"}},
			field:  []string{"metadata", "annotations", "owner"}, want: "team-a"},
	}
	ns := namespace(t, "e2e-kinds", members...)
	mutate := func(f func(*corev1.Service)) []func(*corev1.Service) {
		if f == nil {
			return nil
		}
		return []func(*corev1.Service){f}
	}
	for i, c := range cases {
		name := fmt.Sprintf("svc%d", i)
		service(t, "member1", ns, name, mutate(c.older)...)
		service(t, "member2", ns, name, mutate(c.newer)...)
		export(t, "member1", ns, name, c.olderX)
	}
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	for i, c := range cases {
		export(t, "member2", ns, fmt.Sprintf("svc%d", i), c.newerX)
	}

	r := mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	rows := map[string]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == ns {
			rows[f[1]] = strings.Join(f[2:], " ")
		}
	}
	for i, c := range cases {
		name := fmt.Sprintf("svc%d", i)
		t.Run(c.reason, func(t *testing.T) {
			if row := rows[name]; row != c.reason+" member1 member2" {
				t.Errorf("conflicts table row for %s: %q, want %s won by member1 against member2\n%s", name, row, c.reason, r.stdout)
			}
			for _, cl := range []string{"member1", "member2"} {
				if got := conditions(t, cl, ns, name)["Conflict"]; got != "True/"+c.reason {
					t.Errorf("%s: Conflict condition %q, want True/%s", cl, got, c.reason)
				}
			}
			si := get(t, "member3", siGVR("v1beta1"), ns, name)
			if si == nil {
				t.Fatal("member3: no ServiceImport")
			}
			v, found, err := unstructured.NestedFieldNoCopy(si.Object, c.field...)
			if got := fmt.Sprint(v); !found || err != nil || got != c.want {
				t.Errorf("member3: import %s = %s (found %v, %v), want member1's %s", strings.Join(c.field, "."), got, found, err, c.want)
			}
		})
	}
	if len(rows) != len(cases) {
		t.Errorf("%d conflict rows, want exactly %d:\n%s", len(rows), len(cases), r.stdout)
	}

	// The conflict clears, with an Event, when the newer export comes into line (the whole
	// affinity: ClientIP alone would default the timeout and conflict on the config instead).
	if out, err := runKubectl("member2", "-n", ns, "patch", "service", "svc1", "-p", `{"spec":{"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":600}}}}`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	mustMCS(t, "sync", "-n", ns, "--contexts", allMembers)
	for _, cl := range []string{"member1", "member2"} {
		if got := conditions(t, cl, ns, "svc1")["Conflict"]; got != "False/NoConflicts" {
			t.Errorf("%s: svc1 Conflict condition %q after the fix", cl, got)
		}
	}
	evs, err := clients["member2"].kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=svc1,reason=ConflictResolved"})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no ConflictResolved event on member2's export: %v", err)
	}
}

// export creates a user's ServiceExport with the given spec (nil: empty).
func export(t *testing.T, c, ns, name string, spec map[string]any) {
	t.Helper()
	se := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
	if spec != nil {
		se.Object["spec"] = spec
	}
	if _, err := clients[c].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Create(context.Background(), se, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: creating ServiceExport %s/%s: %v", c, ns, name, err)
	}
}
