package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

func TestHealthyPasses(t *testing.T) {
	r := Run(healthy())
	if r.Summary.Failed != 0 || r.Summary.Warnings != 0 {
		t.Fatalf("healthy clusterset:\n%s", failed(r))
	}
	want := map[string]int{CheckSync: 1, CheckReachable: 3, CheckCRDs: 3, CheckClusterID: 3, CheckRBAC: 3, CheckClock: 1, CheckDNS: 3,
		CheckExportService: 2, CheckExportConds: 2, CheckConflict: 2, CheckEndpoints: 2,
		CheckImport: 3, CheckImportIP: 3, CheckDerived: 3, CheckSlices: 6, CheckFreshness: 6}
	for check, n := range want {
		if got := len(only(r, check, "")); got != n {
			t.Errorf("%s: %d results, want %d", check, got, n)
		}
	}
	if r.APIVersion != "mcs.kubectl.io/v1alpha1" || r.Kind != "DiagnoseReport" || r.Summary.Passed != len(r.Results) {
		t.Errorf("report header %s %s, summary %+v of %d", r.APIVersion, r.Kind, r.Summary, len(r.Results))
	}
}

// Faults that break exactly one link: exactly one result is not ok.
func TestSingleFaults(t *testing.T) {
	for _, tc := range []struct {
		name         string
		mutate       func(s *Snapshot)
		check, in    string
		sev          Severity
		message, fix string
	}{
		{"the installed sync stopped", func(s *Snapshot) { s.Clusters[0].Syncs[0].Renewed = now.Add(-5 * time.Minute) },
			CheckSync, "member1", Warn, "not running: its Lease was last renewed 5m0s ago", "kubectl --context member1 -n kubectl-mcs-system get deployment kubectl-mcs-sync"},
		{"the sync cannot read a member", func(s *Snapshot) {
			m := &s.Clusters[0].Syncs[0].View.Members[2]
			m.State, m.Message = snapshot.Unreachable, "unreachable since 2026-11-28T10:00:00Z"
		}, CheckSync, "member1", Warn, `cannot read cluster "member3" (unreachable): unreachable since 2026-11-28T10:00:00Z`, "kubectl --context member1 -n kubectl-mcs-system logs"},
		{"per member, one member runs no sync", func(s *Snapshot) {
			for i, id := range []string{"member1", "member2"} {
				y := s.Clusters[0].Syncs[0]
				v := *y.View
				v.Local, y.Cluster, y.View = id, id, &v
				s.Clusters[i].Syncs = []snapshot.Sync{y}
			}
		}, CheckSync, "member3", Warn, "runs no sync of its own", "kubectl mcs install --mode=per-member"},
		{"sync never ran", func(s *Snapshot) {
			e := memberOf(s, "member1").ServiceExports[0]
			e.Status.Conditions, e.ManagedFields = nil, e.ManagedFields[:1]
			e.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute)) // after sync's last write
		}, CheckExportConds, "member1", Fail, "no MCS controller has processed this export", "kubectl mcs sync --watch"},
		{"sync runs but has not written the export's status", func(s *Snapshot) {
			e := memberOf(s, "member1").ServiceExports[0]
			e.Status.Conditions, e.ManagedFields = nil, e.ManagedFields[:1]
		}, CheckExportConds, "member1", Fail, "although kubectl-mcs wrote this service's objects 50m ago, after the export was created: sync runs but has not written this export's status", "sync's log"},
		{"a write sync cannot make", func(s *Snapshot) {
			c := &memberOf(s, "member1").ServiceExports[0].Status.Conditions[1]
			c.Status, c.Reason = metav1.ConditionFalse, "Failed"
			c.Message = `Service demo/derived-serve in "member3" cannot be written: Service "derived-serve" is invalid: spec.ports[0].name: Required value.`
		}, CheckExportConds, "member1", Fail, `Conflict=False (50m): Service demo/derived-serve in "member3" cannot be written: Service "derived-serve" is invalid: spec.ports[0].name: Required value.`, "remove what refuses it"},
		{"derived Service without a port of the import", func(s *Snapshot) {
			si := memberOf(s, "member3").ServiceImports[0]
			si.Spec.Ports = []mcsv1beta1.ServicePort{{Name: "tcp-80", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "8080-8080", Port: 8080, Protocol: corev1.ProtocolTCP}}
		}, CheckDerived, "member3", Fail, "ports 80/TCP differ from the ServiceImport's 8080-8080:8080/TCP,tcp-80:80/TCP", "writes the derived Service's ports from the import"},
		{"sync stopped before a change", func(s *Snapshot) {
			at := metav1.NewTime(now.Add(-time.Minute))
			sv := memberOf(s, "member2").Services[0]
			sv.ManagedFields = append(sv.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Time: &at})
		}, CheckExportConds, "member2", Fail, "the Service changed 60s ago, after the conditions were last written (50m ago): no controller is running", "kubectl mcs sync --watch"},
		{"deleted derived Service", func(s *Snapshot) {
			m := memberOf(s, "member3")
			m.Services = m.Services[:0]
		}, CheckDerived, "member3", Fail, "derived Service demo/derived-serve does not exist", "recreates the derived Service"},
		{"CRDs missing", func(s *Snapshot) {
			m := memberOf(s, "member3")
			m.Cluster = snapshot.Cluster{ID: "member3", Context: "member3", State: snapshot.NoCRDs}
			m.ServedVersions = nil
		}, CheckCRDs, "member3", Fail, "not installed", "kubectl mcs init --contexts=member3"},
		{"foreign ServiceImport", func(s *Snapshot) {
			memberOf(s, "member3").ServiceImports[0].Labels = nil
		}, CheckImport, "member3", Fail, "was not created by kubectl-mcs", "kubectl --context member3 -n demo delete serviceimport serve"},
		{"no delete on EndpointSlices", func(s *Snapshot) {
			m := memberOf(s, "member2")
			for i := range m.Access {
				if m.Access[i].Resource == "endpointslices" && m.Access[i].Verb == "delete" {
					m.Access[i].Allowed = false
				}
			}
		}, CheckRBAC, "member2", Fail, "missing delete endpointslices.discovery.k8s.io (in namespace demo)", `user of context "member2"`},
		{"the installed ServiceAccount lacks a verb", func(s *Snapshot) {
			m := memberOf(s, "member3")
			m.AccessAs = "system:serviceaccount:kubectl-mcs-system:kubectl-mcs-sync"
			for i := range m.Access {
				if m.Access[i].Resource == "serviceimports" && m.Access[i].Verb == "create" {
					m.Access[i].Allowed = false
				}
			}
		}, CheckRBAC, "member3", Fail, "as the installed sync's ServiceAccount kubectl-mcs-system/kubectl-mcs-sync: missing create serviceimports.multicluster.x-k8s.io", "kubectl mcs install` again"},
		{"no Lease verbs", func(s *Snapshot) {
			m := memberOf(s, "member1")
			for i := range m.Access {
				m.Access[i].Allowed = !m.Access[i].LeaderElection
			}
		}, CheckRBAC, "member1", Warn, "missing create leases.coordination.k8s.io, get leases", "--leader-elect"},
		{"slice from outside the clusterset", func(s *Snapshot) {
			m := memberOf(s, "member3")
			m.EndpointSlices = append(m.EndpointSlices, copyOf("member9", "10.19.0.1"))
		}, CheckForeignSlice, "member3", Fail, `from cluster "member9", which is not in the clusterset`, "-l multicluster.kubernetes.io/source-cluster=member9"},
		{"v1alpha1 only", func(s *Snapshot) {
			memberOf(s, "member2").ServedVersions = []string{"v1alpha1"}
		}, CheckCRDs, "member2", Warn, "serves only v1alpha1", "kubectl mcs init"},
		{"clock skew", func(s *Snapshot) {
			memberOf(s, "member3").ClockOffset = ptr(2500 * time.Millisecond)
		}, CheckClock, "member3", Warn, `"member3" is 2.5s ahead of "member1"`, "NTP"},
		{"CoreDNS without our block", func(s *Snapshot) {
			memberOf(s, "member1").CoreDNS = &corev1.ConfigMap{Data: map[string]string{"Corefile": ".:53 {\n  kubernetes cluster.local\n}\n"}}
			memberOf(s, "member3").CoreDNS = nil // no CoreDNS here: skipped
		}, CheckDNS, "member1", Warn, "no kubectl-mcs block", "kubectl mcs init --dns --contexts=member1"},
		{"our block from before the DNS server", func(s *Snapshot) {
			memberOf(s, "member2").CoreDNS.Data["Corefile"] = ".:53 {\n  kubernetes cluster.local\n}\n" + DNSMarker +
				"\nclusterset.local:53 {\n  rewrite stop {\n  }\n}\n" + corefile.EndMarker + "\n"
		}, CheckDNS, "member2", Fail, "cannot forward the clusterset zone: the kubectl-mcs block forwards the zone nowhere", "kubectl mcs init --dns --contexts=member2"},
		{"DNS server Service deleted", func(s *Snapshot) {
			memberOf(s, "member3").DNSServer, memberOf(s, "member3").DNSServerSlices = nil, nil
		}, CheckDNS, "member3", Fail, "service kubectl-mcs-system/kubectl-mcs-dns does not exist: CoreDNS forwards the clusterset zone to 10.96.2.53:53",
			"kubectl mcs dns-server --print-manifests --context member3 | kubectl --context member3 apply -f -"},
		{"DNS server Service recreated with another IP", func(s *Snapshot) {
			memberOf(s, "member1").DNSServer.Spec.ClusterIPs = []string{"10.96.7.7"}
		}, CheckDNS, "member1", Fail, "forwards the clusterset zone to 10.96.0.53:53, which is not service kubectl-mcs-system/kubectl-mcs-dns (cluster IPs 10.96.7.7", "kubectl mcs init --dns --contexts=member1"},
		{"DNS server not ready", func(s *Snapshot) {
			for i := range memberOf(s, "member2").DNSServerSlices[0].Endpoints {
				memberOf(s, "member2").DNSServerSlices[0].Endpoints[i].Conditions.Ready = ptr(false)
			}
		}, CheckDNS, "member2", Fail, "service kubectl-mcs-system/kubectl-mcs-dns has no ready endpoints", "-n kubectl-mcs-system get pods -l app.kubernetes.io/name=kubectl-mcs-dns"},
		{"DNS server Service unreadable", func(s *Snapshot) {
			memberOf(s, "member2").DNSServer, memberOf(s, "member2").DNSServerErr = nil, "forbidden"
		}, CheckDNS, "member2", Warn, "the service could not be read: forbidden", "Allow get on services"},
		{"import IP differs from the derived Service", func(s *Snapshot) {
			memberOf(s, "member2").ServiceImports[0].Spec.IPs = []string{"10.96.9.9"}
		}, CheckImportIP, "member2", Fail, "spec.ips 10.96.9.9 differ from the derived Service's cluster IPs 10.96.1.20", "kubectl mcs sync"},
		{"import misses a source", func(s *Snapshot) {
			memberOf(s, "member1").ServiceImports[0].Status.Clusters = memberOf(s, "member1").ServiceImports[0].Status.Clusters[:1]
		}, CheckImport, "member1", Fail, `status.clusters lists "member1" but "member1", "member2" export it`, "kubectl mcs sync"},
		{"clustersets differ", func(s *Snapshot) {
			memberOf(s, "member1").ClusterProperties = map[string]string{PropertyClusterset: "east"}
			memberOf(s, "member2").ClusterProperties = map[string]string{PropertyClusterset: "west"}
		}, CheckClusterID, "", Fail, `"east" in "member1", "west" in "member2"`, "the same in every member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := healthy()
			tc.mutate(s)
			expectOne(t, Run(s), tc.check, tc.in, tc.sev, tc.message, tc.fix)
		})
	}
}

// expectHas asserts one result of check in cluster with sev, message and fix containing texts.
func expectHas(t *testing.T, r *Report, check, cluster string, sev Severity, msg, fix string) {
	t.Helper()
	for _, x := range only(r, check, cluster) {
		if x.Severity == sev && strings.Contains(x.Message, msg) && strings.Contains(fixText(x), fix) {
			return
		}
	}
	t.Errorf("no %s %s in %q with message %q and fix %q; got:\n%s", sev, check, cluster, msg, fix, failed(r))
}

// Faults whose effects run down the chain: the first broken link is named, with its fix.
func TestChainFaults(t *testing.T) {
	t.Run("export of a missing Service", func(t *testing.T) {
		s := healthy()
		m := memberOf(s, "member2")
		m.Services, m.EndpointSlices = m.Services[1:], m.EndpointSlices[1:]
		r := Run(s)
		expectHas(t, r, CheckExportService, "member2", Fail, "there is no Service demo/serve in this cluster", "kubectl mcs unexpose serve -n demo --contexts=member2")
		expectHas(t, r, CheckSlices, "member3", Fail, `come from "member2", which does not export serve`, "deletes the copies")
	})
	t.Run("ExternalName", func(t *testing.T) {
		s := healthy()
		sv := memberOf(s, "member2").Services[0]
		sv.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}
		expectHas(t, Run(s), CheckExportService, "member2", Fail, "ExternalName", "unexpose")
	})
	t.Run("member down", func(t *testing.T) {
		s := healthy()
		m := memberOf(s, "member2")
		m.Cluster = snapshot.Cluster{ID: "member2", Context: "member2", State: snapshot.Unreachable, Message: "unreachable: connection refused"}
		m.Access, m.ClockOffset = nil, nil
		r := Run(s)
		expectHas(t, r, CheckReachable, "member2", Fail, "unreachable: connection refused", "kubectl --context member2 get --raw /readyz")
		expectHas(t, r, CheckSlices, "member3", Warn, `"member2" cannot be read`, "reachable check")
		if r.Summary.Failed != 1 {
			t.Errorf("the other members' checks fail too:\n%s", failed(r))
		}
	})
	t.Run("conflicting export", func(t *testing.T) {
		s := healthy()
		sv := memberOf(s, "member2").Services[0]
		sv.Spec.Ports[0].Port = 8080
		sv.Spec.Ports[0].Name = ""
		r := Run(s)
		expectHas(t, r, CheckConflict, "member2", Fail, "Conflicting ports", `agree with the one in "member1"`)
		if x := only(r, CheckConflict, "member1"); len(x) != 1 || x[0].Severity != OK {
			t.Errorf("the winner: %+v", x)
		}
	})
	t.Run("cluster ID clash", func(t *testing.T) {
		s := healthy()
		memberOf(s, "member2").ClusterProperties = map[string]string{PropertyClusterID: "member1"}
		r := Run(s)
		expectHas(t, r, CheckClusterID, "member2", Fail, `ClusterProperty cluster.clusterset.k8s.io says "member1", not "member2"`, "Give each cluster its own ID")
		expectHas(t, r, CheckClusterID, "member1", Fail, `ID "member1" is also claimed by "member2"`, "Give each cluster its own ID")
	})
	t.Run("the same cluster twice", func(t *testing.T) {
		s := healthy()
		memberOf(s, "member3").SystemUID = "uid-member1"
		expectHas(t, Run(s), CheckClusterID, "member3", Fail, `same cluster as "member1"`, "once in --contexts")
	})
	t.Run("no ready endpoints anywhere", func(t *testing.T) {
		s := healthy()
		for _, id := range []string{"member1", "member2"} {
			for _, sl := range memberOf(s, id).EndpointSlices {
				for i := range sl.Endpoints {
					sl.Endpoints[i].Conditions.Ready = ptr(false)
				}
			}
		}
		expectHas(t, Run(s), CheckEndpoints, "member1", Fail, "none in any other exporting cluster", "get endpointslices -l kubernetes.io/service-name=serve")
	})
	t.Run("derived Service not ours", func(t *testing.T) {
		s := healthy()
		memberOf(s, "member3").Services[0].Labels = nil
		expectHas(t, Run(s), CheckDerived, "member3", Fail, "was not created by kubectl-mcs", "Delete or rename")
	})
	t.Run("namespace missing", func(t *testing.T) {
		s := healthy()
		m := memberOf(s, "member3")
		m.Namespaces, m.ServiceImports, m.Services, m.EndpointSlices = []string{"default"}, nil, nil, nil
		r := Run(s)
		if r.Summary.Failed != 0 {
			t.Errorf("no namespace, no import (KEP-1645):\n%s", failed(r))
		}
		// Not a failure (KEP-1645), but the service is degraded: a warning naming the cluster.
		if x := only(r, CheckImport, "member3"); len(x) != 1 || x[0].Severity != Warn ||
			x[0].Message != `demo/serve is not imported in "member3": it has no namespace "demo" (a service is imported only where its namespace exists)` {
			t.Errorf("%+v", x)
		}
	})
	t.Run("read of a subset", func(t *testing.T) {
		// --contexts=member3: member1 and member2 export, member3's import and copies name them.
		s := healthy()
		s.Clusters = s.Clusters[2:]
		r := Run(s)
		x := only(r, CheckImport, "member3")
		if len(x) != 1 || x[0].Severity != Warn || x[0].Message != `no cluster of this read exports it; it names "member1", "member2", outside --contexts: whether it is left over cannot be known here` {
			t.Errorf("%+v", x)
		}
		if r.Summary.Failed != 0 {
			t.Errorf("a read of member3 alone fails:\n%s", failed(r))
		}
		// --contexts=member2,member3: member2's export is checked, member1's cannot be.
		s = healthy()
		s.Clusters = s.Clusters[1:]
		r = Run(s)
		if x := only(r, CheckImport, "member3"); len(x) != 1 || x[0].Severity != OK ||
			x[0].Message != `imports from "member2", and from "member1", outside --contexts (not checked)` {
			t.Errorf("%+v", x)
		}
		if r.Summary.Failed != 0 {
			t.Errorf("a read of member2 and member3 fails:\n%s", failed(r))
		}
	})
}

func TestKarmada(t *testing.T) {
	s := healthy()
	s.Karmada = &Karmada{Context: "karmada", Status: &status.KarmadaServiceStatusList{
		ServiceExports: []status.KarmadaObjectStatus{{Namespace: "demo", Name: "serve", Health: status.Degraded,
			Problems: []string{"No PropagationPolicy selects it: it stays on the control plane."}}},
		ServiceImports: []status.KarmadaObjectStatus{{Namespace: "demo", Name: "serve", Health: status.Healthy, PlacedIn: []string{"member3"}}},
		MultiClusterServices: []status.KarmadaMCSStatus{{Namespace: "demo", Name: "other", Health: status.Unknown},
			{Namespace: "demo", Name: "serve", Health: status.Healthy, ConsumerClusters: []string{"member3"}, ProviderClusters: []string{"member1"}}},
	}}
	m3 := memberOf(s, "member3")
	m3.Services = nil
	r := Run(s)
	expectHas(t, r, CheckKarmada, "karmada", Fail, "No PropagationPolicy selects it", "--karmada-context=karmada --api=serviceexport")
	expectHas(t, r, CheckKarmada, "karmada", Warn, "no Karmada controller has reported", "MultiClusterService=true")
	expectHas(t, r, CheckKarmadaPlaced, "member3", Fail, "the derived Service derived-serve does not exist", "Work for \"member3\"")
	expectHas(t, r, CheckKarmadaPlaced, "member3", Fail, "a consumer of MultiClusterService demo/serve without the Service", "ServiceApplied")

	s = healthy()
	s.Service = "serve"
	s.Karmada = &Karmada{Context: "karmada", Err: "connection refused"}
	expectHas(t, Run(s), CheckKarmada, "karmada", Fail, "could not be read: connection refused", `context "karmada"`)
}

func TestManagedFieldsOfSyncDoNotCountAsChanges(t *testing.T) {
	// A change sync acted on (it rewrote the import afterwards) is not a sign of a stopped
	// controller, even when the conditions themselves did not move.
	s := healthy()
	changed, acted := metav1.NewTime(now.Add(-2*time.Minute)), metav1.NewTime(now.Add(-time.Minute))
	sv := memberOf(s, "member1").Services[0]
	sv.ManagedFields = append(sv.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Time: &changed})
	si := memberOf(s, "member3").ServiceImports[0]
	si.ManagedFields = append(si.ManagedFields, metav1.ManagedFieldsEntry{Manager: names.FieldManager, Time: &acted})
	if r := Run(s); r.Summary.Failed != 0 {
		t.Errorf("%s", failed(r))
	}
}

// A SERVICE that no member holds is Missing, whatever else passes; the one asked for is not.
func TestMissingService(t *testing.T) {
	s := healthy()
	s.Service = "nosuch"
	if r := Run(s); !r.Missing || r.Summary.Failed != 0 {
		t.Errorf("diagnose nosuch: missing %v, %+v", r.Missing, r.Summary)
	}
	s.Service = "serve"
	if r := Run(s); r.Missing {
		t.Error("diagnose serve: missing")
	}
	s.Service = ""
	if r := Run(s); r.Missing {
		t.Error("diagnose (every service): missing")
	}
}

// The DNS results when the block forwards to the DNS server's Service, and to an address given
// with --dns-server, which diagnose cannot check.
func TestDNSForward(t *testing.T) {
	s := healthy()
	m := memberOf(s, "member1")
	text, err := corefile.Apply(".:53 {\n    kubernetes cluster.local\n}\n", corefile.DefaultDomain, corefile.Upstream{Addr: "127.0.0.1:5353"})
	if err != nil {
		t.Fatal(err)
	}
	m.CoreDNS.Data["Corefile"], m.DNSServer, m.DNSServerSlices = text, nil, nil
	r := Run(s)
	expectHas(t, r, CheckDNS, "member1", OK, "CoreDNS forwards the clusterset zone to 127.0.0.1:5353 (given with --dns-server: not checked)", "")
	expectHas(t, r, CheckDNS, "member2", OK, "CoreDNS forwards the clusterset zone to service kubectl-mcs-system/kubectl-mcs-dns (10.96.1.53:53), 2 ready endpoint(s)", "")
	for _, x := range only(r, CheckDNS, "member2") {
		if x.Object != "service/kubectl-mcs-system/kubectl-mcs-dns" {
			t.Errorf("object %q", x.Object)
		}
	}
}

// A skew no larger than what slow reads leave uncertain is not told; past it, it is.
func TestClockSkewWithinTheReadsUncertainty(t *testing.T) {
	for _, c := range []struct {
		skew, readErr time.Duration
		want          Severity
	}{{2500 * time.Millisecond, time.Second, OK}, {2500 * time.Millisecond, 500 * time.Millisecond, Warn}, {1500 * time.Millisecond, 0, Warn}} {
		s := healthy()
		for i := range s.Clusters {
			s.Clusters[i].ClockOffset, s.Clusters[i].ClockError = ptr(time.Duration(0)), c.readErr
		}
		memberOf(s, "member3").ClockOffset = ptr(c.skew)
		rs := checkClock(s)
		if len(rs) != 1 || rs[0].Severity != c.want {
			t.Errorf("skew %v, reads ±%v: got %+v, want %v", c.skew, c.readErr, rs, c.want)
		}
	}
}

// No sync running is said, and warns once a copy is out of date: a one-shot sync leaves a
// healthy clusterset too.
func TestNoSyncRunning(t *testing.T) {
	s := healthy()
	s.Clusters[0].Syncs = nil
	r := Run(s)
	if got := only(r, CheckSync, ""); len(got) != 1 || got[0].Severity != OK || !strings.Contains(got[0].Message, "no sync runs in the clusterset") {
		t.Fatalf("no sync, all fresh: %+v", got)
	}
	m3 := memberOf(s, "member3")
	for i, sl := range m3.EndpointSlices {
		if sl.Labels["multicluster.kubernetes.io/source-cluster"] == "member1" {
			m3.EndpointSlices[i].Endpoints = sl.Endpoints[:1] // one endpoint of member1's never copied
		}
	}
	r = Run(s)
	got := only(r, CheckSync, "")
	if len(got) != 1 || got[0].Severity != Warn || len(got[0].Commands) != 1 || !strings.Contains(got[0].Commands[0].String(), "kubectl mcs sync --watch") {
		t.Fatalf("no sync, a stale copy: %+v\n%s", got, failed(r))
	}
}
