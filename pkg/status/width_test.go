package status

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// typical is the service the width rule is measured on: three clusters, three ports,
// 20-character names, one member unreachable with a whole connection error.
func typical() *MultiClusterServiceStatusList {
	const ns, name = "demo", "checkout-frontend-v2"
	ports := []corev1.ServicePort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "admin", Port: 9090, Protocol: corev1.ProtocolTCP}, {Name: "metrics-udp", Port: 5000, Protocol: corev1.ProtocolUDP}}
	svc := service(ns, name, false)
	svc.Spec.Ports = ports
	src := slice(ns, name, name+"-abcde", true, true)
	imp := func(ip string) *mcsv1beta1.ServiceImport {
		si := serviceImport(ns, name, mcsv1beta1.ClusterSetIP, ip, "member1", "member2")
		si.Spec.Ports = nil
		for _, p := range ports {
			si.Spec.Ports = append(si.Spec.Ports, mcsv1beta1.ServicePort{Name: p.Name, Port: p.Port, Protocol: p.Protocol})
		}
		return si
	}
	svc2 := svc.DeepCopy()
	svc2.Spec.Ports[0].Port = 8081 // a port conflict, with its message
	cs := []snapshot.Cluster{
		cluster("member1", export(ns, name, 10), svc, src, imp("10.96.0.1"), derived(ns, name, "10.96.0.1")),
		cluster("member2", export(ns, name, 20), svc2, slice(ns, name, name+"-fghij", true), imp("10.96.0.2"), derived(ns, name, "10.96.0.2"),
			copyOf(src, name, "member1")),
		{ID: "member3", Context: "member3", State: snapshot.Unreachable, Message: `Get "https://127.0.0.1:41577/apis/multicluster.x-k8s.io/v1beta1/serviceimports?limit=500&timeout=32s": dial tcp 127.0.0.1:41577: connect: connection refused`},
	}
	// -A: a second namespace, another 20-character name.
	cs[0].Namespaces = append(cs[0].Namespaces, "payments")
	cs[0].ServiceExports = append(cs[0].ServiceExports, export("payments", "ledger-api-internal1", 30))
	cs[0].Services = append(cs[0].Services, service("payments", "ledger-api-internal1", false))
	return Build(cs)
}

// Every table and description of status fits printers.Width for the typical service: the
// default table (one namespace and -A: it always has NAMESPACE), each --watch redraw (the same
// table), the description (a connection error wraps under its field) and Karmada's view.
func TestWidth(t *testing.T) {
	l := typical()
	if len(l.Items) != 2 || len(l.Items[0].Ports) != 3 {
		t.Fatalf("fixture: %d items", len(l.Items))
	}
	var b bytes.Buffer
	for _, color := range []bool{false, true} {
		if err := PrintTable(&b, l, PrintOptions{Now: now, Color: color}); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range l.Items {
		if err := Describe(&b, l, it, PrintOptions{Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrintKarmada(&b, BuildKarmada(karmadaInput()), PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	kl := BuildKarmada(karmadaInput())
	if err := DescribeKarmada(&b, kl, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, l := range printers.LongLines(b.String(), printers.Width) {
		t.Error(l)
	}
	// The long values are there, whole: the error under State, the ports in the description.
	out := b.String()
	for _, want := range []string{"State:", "connect: connection refused", "http:8080/TCP, admin:9090/TCP,", "checkout-frontend-v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}
