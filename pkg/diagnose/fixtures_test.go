package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

var (
	now     = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	created = metav1.NewTime(now.Add(-time.Hour))
	synced  = metav1.NewTime(now.Add(-50 * time.Minute))
)

func ptr[T any](v T) *T { return &v }

func svc(name, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, CreationTimestamp: created},
		Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip}, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
}

func slice(name, svcName string, ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, CreationTimestamp: created,
		Labels: map[string]string{discoveryv1.LabelServiceName: svcName}}, AddressType: discoveryv1.AddressTypeIPv4}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}})
	}
	return s
}

func copyOf(src string, ips ...string) *discoveryv1.EndpointSlice {
	s := slice(names.EndpointSliceName("serve", src, "serve-abc"), names.DerivedServiceName("serve"), ips...)
	s.CreationTimestamp = synced
	s.Labels[mcsv1beta1.LabelServiceName] = "serve"
	s.Labels[mcsv1beta1.LabelSourceCluster] = src
	s.Labels[names.EndpointSliceManagedByLabel] = names.EndpointSliceManagedByValue
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-mcs", Time: &synced}}
	return s
}

func export(cluster string) *mcsv1beta1.ServiceExport {
	cond := func(t mcsv1beta1.ServiceExportConditionType, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: st, Reason: reason, LastTransitionTime: synced}
	}
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", CreationTimestamp: created,
		Labels:        map[string]string{names.ManagedByLabel: names.ManagedByValue},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-mcs", Time: &created}, {Manager: "kubectl-mcs", Subresource: "status", Time: &synced}}},
		Status: mcsv1beta1.ServiceExportStatus{Conditions: []metav1.Condition{
			cond(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, "Valid"),
			cond(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, "Exported"),
			cond(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, "NoConflicts")}}}
}

func serviceImport(ip string, sources ...string) *mcsv1beta1.ServiceImport {
	si := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", CreationTimestamp: synced,
		Labels:        map[string]string{names.ManagedByLabel: names.ManagedByValue},
		Annotations:   map[string]string{names.DerivedServiceAnnotation: names.DerivedServiceName("serve")},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-mcs", Time: &synced}}},
		Spec: mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, IPs: []string{ip}, Ports: []mcsv1beta1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	for _, s := range sources {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: s})
	}
	return si
}

func derived(ip string) *corev1.Service {
	d := svc(names.DerivedServiceName("serve"), ip)
	d.Labels = map[string]string{names.ManagedByLabel: names.ManagedByValue}
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-mcs", Time: &synced}}
	return d
}

// healthy is a clusterset of three where member1 and member2 export demo/serve (two pods each)
// and every member imports it, as sync leaves it.
func healthy() *Snapshot {
	s := &Snapshot{Now: now, Namespace: "demo"}
	pods := map[string][]string{"member1": {"10.11.0.1", "10.11.0.2"}, "member2": {"10.12.0.1", "10.12.0.2"}}
	for i, id := range []string{"member1", "member2", "member3"} {
		m := Cluster{Cluster: snapshot.Cluster{ID: id, Context: id, State: snapshot.Reachable, MCSAPIVersion: "v1beta1"},
			ServedVersions: []string{"v1beta1", "v1alpha1"}, SystemUID: "uid-" + id, ClockOffset: ptr(time.Duration(i) * 100 * time.Millisecond)}
		for _, a := range SyncAccess {
			for _, v := range a.Verbs {
				m.Access = append(m.Access, AccessAnswer{Access: a, Verb: v, Allowed: true})
			}
		}
		m.Namespaces = []string{"default", "demo", "kube-system"}
		if ips, ok := pods[id]; ok {
			m.ServiceExports = append(m.ServiceExports, export(id))
			m.Services = append(m.Services, svc("serve", fmt.Sprintf("10.96.%d.10", i)))
			m.EndpointSlices = append(m.EndpointSlices, slice("serve-abc", "serve", ips...))
		}
		ip := fmt.Sprintf("10.96.%d.20", i)
		m.ServiceImports = append(m.ServiceImports, serviceImport(ip, "member1", "member2"))
		m.Services = append(m.Services, derived(ip))
		m.EndpointSlices = append(m.EndpointSlices, copyOf("member1", pods["member1"]...), copyOf("member2", pods["member2"]...))
		withDNSServer(&m, fmt.Sprintf("10.96.%d.53", i))
		s.Clusters = append(s.Clusters, m)
	}
	// sync installed in member1, renewing its Lease, every member read.
	view := &snapshot.SyncView{Synced: true}
	for _, m := range s.Clusters {
		view.Members = append(view.Members, snapshot.SyncViewedMember{Cluster: m.ID, State: snapshot.Reachable})
	}
	s.Clusters[0].Syncs = []snapshot.Sync{{Cluster: "member1", Namespace: names.SystemNamespace, Holder: "kubectl-mcs-sync-5d4f-x2x_0e1f",
		Renewed: now.Add(-2 * time.Second), LeaseDuration: 15 * time.Second, View: view}}
	return s
}

// withDNSServer gives m a Corefile whose kubectl-mcs block forwards to the DNS server's Service
// at ip, that Service and a slice with two ready endpoints, as init --dns and
// dns-server --print-manifests leave them.
func withDNSServer(m *Cluster, ip string) {
	text, err := corefile.Apply(".:53 {\n    kubernetes cluster.local\n}\n", corefile.DefaultDomain,
		corefile.Upstream{Addr: ip, Service: names.SystemNamespace + "/" + names.DNSServerName})
	if err != nil {
		panic(err)
	}
	m.CoreDNS = &corev1.ConfigMap{Data: map[string]string{"Corefile": text}}
	m.DNSServer = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: names.SystemNamespace, Name: names.DNSServerName},
		Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip}, Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}}}}
	dnsSlice := slice("kubectl-mcs-dns-abc", names.DNSServerName, "10.11.0.53", "10.11.0.54")
	dnsSlice.Namespace = names.SystemNamespace
	m.DNSServerSlices = []discoveryv1.EndpointSlice{*dnsSlice}
}

func memberOf(s *Snapshot, id string) *Cluster {
	for i := range s.Clusters {
		if s.Clusters[i].ID == id {
			return &s.Clusters[i]
		}
	}
	panic(id)
}

// only returns the results of one check in one cluster ("" for any).
func only(r *Report, check, cluster string) []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Check == check && (cluster == "" || x.Cluster == cluster) {
			out = append(out, x)
		}
	}
	return out
}

// failed lists the failures and warnings, one line each, for messages.
func failed(r *Report) string {
	var b strings.Builder
	for _, x := range r.Results {
		if x.Severity != OK {
			fmt.Fprintf(&b, "%s %s %s %s: %s (fix: %s)\n", x.Severity, x.Check, x.Cluster, x.Object, x.Message, fixText(x))
		}
	}
	return b.String()
}

// expectOne asserts that the only failure or warning is check in cluster with sev, its message
// and fix containing the given texts.
func expectOne(t *testing.T, r *Report, check, cluster string, sev Severity, msg, fix string) {
	t.Helper()
	var hits []Result
	for _, x := range r.Results {
		if x.Severity != OK {
			hits = append(hits, x)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("want exactly one non-ok result (%s %s), got:\n%s", check, cluster, failed(r))
	}
	h := hits[0]
	if h.Check != check || h.Cluster != cluster || h.Severity != sev || !strings.Contains(h.Message, msg) || !strings.Contains(fixText(h), fix) {
		t.Errorf("got %s %s %s: %q (fix %q); want %s %s %s, message containing %q, fix containing %q", h.Severity, h.Check, h.Cluster, h.Message, fixText(h), sev, check, cluster, msg, fix)
	}
}
