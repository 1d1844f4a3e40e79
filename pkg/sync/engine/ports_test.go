package engine

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// exporter is a member exporting shop/cart with ports, its export created at minute created, and
// one source slice whose ports the EndpointSlice controller named after the Service's.
func exporter(id string, created int, addr string, ports ...corev1.ServicePort) ObservedCluster {
	svc := mkService("shop", "cart", ports...)
	sl := mkSlice("shop", "cart", "cart-"+id, addr)
	sl.Ports = slicePorts(svc)
	c := member(id, svc, mkExport("shop", "cart", created), sl)
	c.Namespaces = append(c.Namespaces, "shop")
	return c
}

func importer(id string) ObservedCluster {
	c := member(id)
	c.Namespaces = append(c.Namespaces, "shop")
	return c
}

// portsIn renders a cluster's derived Service ports and, per source cluster, its copies' port
// names.
func portsIn(t *testing.T, d Desired, id string) (svc []string, copies map[string][]string) {
	t.Helper()
	cd := d.Clusters[id]
	s := findService(cd, "shop", "derived-cart")
	if s == nil {
		t.Fatalf("%s: no derived Service", id)
	}
	for _, p := range s.Spec.Ports {
		svc = append(svc, fmt.Sprintf("%s:%d/%s", p.Name, p.Port, p.Protocol))
	}
	copies = map[string][]string{}
	for _, sl := range cd.EndpointSlices {
		src := sl.Labels[mcsv1beta1.LabelSourceCluster]
		for _, p := range sl.Ports {
			copies[src] = append(copies[src], strPtrVal(p.Name))
		}
		sort.Strings(copies[src])
	}
	return svc, copies
}

func port(name string, n int32, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: n, Protocol: proto}
}

// The report: member3 exports cart with one unnamed port, member1 with one named by `kubectl
// create service clusterip cart --tcp=8080:8080`. The derived Service of two ports names both,
// the copies name theirs alike, and the conflict says which export each port came from.
func TestUnnamedPortInAUnion(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		exporter("member3", 0, "10.3.0.1", port("", 80, "")),
		exporter("member1", 5, "10.1.0.1", port("8080-8080", 8080, corev1.ProtocolTCP)),
		importer("member2"),
	}}
	d := Compute(obs)
	checkValid(t, d)
	svc, copies := portsIn(t, d, "member2")
	if want := []string{"tcp-80:80/TCP", "8080-8080:8080/TCP"}; !reflect.DeepEqual(svc, want) {
		t.Errorf("derived Service ports %v, want %v", svc, want)
	}
	if want := map[string][]string{"member3": {"tcp-80"}, "member1": {"8080-8080"}}; !reflect.DeepEqual(copies, want) {
		t.Errorf("copies' ports by source %v, want %v", copies, want)
	}
	imp := findImport(d.Clusters["member2"], "shop", "cart")
	if got := renderPorts(imp.Spec.Ports); got != "tcp-80:80/TCP,8080-8080:8080/TCP" {
		t.Errorf("import ports %s", got)
	}
	if len(d.Conflicts) != 1 {
		t.Fatalf("conflicts %+v, want one PortConflict", d.Conflicts)
	}
	want := `Conflicting ports. Using "80/TCP as tcp-80" from oldest service export in "member3" and "8080-8080:8080/TCP" from service export in "member1". Traffic to "tcp-80:80/TCP" does not reach "member1". 1/2 clusters disagree.`
	if c := d.Conflicts[0]; c.Message != want || c.Winner != "member3" {
		t.Errorf("conflict %q (winner %q)\nwant     %q", c.Message, c.Winner, want)
	}

	// From the single unnamed port of member3 alone, as the derived Service was before member1
	// exported, the update names it: no write the apiserver refuses on the way.
	alone := Observed{Now: now, Clusters: []ObservedCluster{obs.Clusters[0], importer("member2")}}
	if _, left := converge(&alone, 6); len(left) != 0 {
		t.Fatalf("no convergence: %q", summary(left))
	}
	if svc, copies := portsIn(t, Compute(alone), "member2"); !reflect.DeepEqual(svc, []string{":80/TCP"}) || !reflect.DeepEqual(copies["member3"], []string{""}) {
		t.Errorf("one unnamed port: derived Service %v, copies %v; want it left unnamed", svc, copies)
	}
	alone.Clusters = append(alone.Clusters, obs.Clusters[1])
	for i := 0; i < 6; i++ {
		d := Compute(alone)
		checkValid(t, d)
		acts := Plan(alone, d)
		if len(acts) == 0 {
			break
		}
		apply(&alone, acts)
	}
	if svc, _ := portsIn(t, Compute(alone), "member2"); !reflect.DeepEqual(svc, []string{"tcp-80:80/TCP", "8080-8080:8080/TCP"}) {
		t.Errorf("after member1 exported: %v", svc)
	}
}

// Port names in a union: every case yields a Service and copies the apiserver accepts, and copies
// whose port names are the derived Service's.
func TestPortNamesInAUnion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		oldest    []corev1.ServicePort
		newer     []corev1.ServicePort
		svc       []string
		copies    map[string][]string // port names of the copies, by source
		conflicts int
	}{{
		name:   "one unnamed port everywhere stays unnamed",
		oldest: []corev1.ServicePort{port("", 80, "")}, newer: []corev1.ServicePort{port("", 80, corev1.ProtocolTCP)},
		svc: []string{":80/TCP"}, copies: map[string][]string{"a": {""}, "b": {""}},
	}, {
		name:   "two unnamed ports of different numbers: both served, both named",
		oldest: []corev1.ServicePort{port("", 80, "")}, newer: []corev1.ServicePort{port("", 8080, "")},
		svc: []string{"tcp-80:80/TCP", "tcp-8080:8080/TCP"}, copies: map[string][]string{"a": {"tcp-80"}, "b": {"tcp-8080"}}, conflicts: 1,
	}, {
		name:   "unnamed TCP and UDP ports of one number",
		oldest: []corev1.ServicePort{port("", 53, corev1.ProtocolUDP)}, newer: []corev1.ServicePort{port("", 53, corev1.ProtocolTCP)},
		svc: []string{"udp-53:53/UDP", "tcp-53:53/TCP"}, copies: map[string][]string{"a": {"udp-53"}, "b": {"tcp-53"}}, conflicts: 1,
	}, {
		name:   "a port named as the generated name is the same port",
		oldest: []corev1.ServicePort{port("", 80, "")}, newer: []corev1.ServicePort{port("tcp-80", 80, ""), port("metrics", 9090, "")},
		svc: []string{"tcp-80:80/TCP", "metrics:9090/TCP"}, copies: map[string][]string{"a": {"tcp-80"}, "b": {"metrics", "tcp-80"}}, conflicts: 1,
	}, {
		name:   "the generated name clashes with an older port's: the older keeps it",
		oldest: []corev1.ServicePort{port("tcp-80", 81, ""), port("http", 8080, "")}, newer: []corev1.ServicePort{port("", 80, "")},
		svc: []string{"tcp-80:81/TCP", "http:8080/TCP"}, copies: map[string][]string{"a": {"http", "tcp-80"}}, conflicts: 1,
	}, {
		name:   "the generated name clashes with a newer port's: the unnamed older one keeps it",
		oldest: []corev1.ServicePort{port("", 80, "")}, newer: []corev1.ServicePort{port("tcp-80", 81, ""), port("http", 8080, "")},
		svc: []string{"tcp-80:80/TCP", "http:8080/TCP"}, copies: map[string][]string{"a": {"tcp-80"}, "b": {"http"}}, conflicts: 1,
	}, {
		name:   "one port under two names: the older name",
		oldest: []corev1.ServicePort{port("web", 80, "")}, newer: []corev1.ServicePort{port("www", 80, ""), port("metrics", 9090, "")},
		svc: []string{"web:80/TCP", "metrics:9090/TCP"}, copies: map[string][]string{"a": {"web"}, "b": {"metrics"}}, conflicts: 1,
	}, {
		name:   "one name for two ports: the older port",
		oldest: []corev1.ServicePort{port("http", 80, "")}, newer: []corev1.ServicePort{port("http", 8080, ""), port("grpc", 9090, "")},
		svc: []string{"http:80/TCP", "grpc:9090/TCP"}, copies: map[string][]string{"a": {"http"}, "b": {"grpc"}}, conflicts: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obs := Observed{Now: now, Clusters: []ObservedCluster{
				exporter("a", 0, "10.1.0.1", tc.oldest...), exporter("b", 1, "10.2.0.1", tc.newer...), importer("c")}}
			d := Compute(obs)
			checkValid(t, d)
			for _, id := range []string{"a", "b", "c"} {
				svc, copies := portsIn(t, d, id)
				if !reflect.DeepEqual(svc, tc.svc) || !reflect.DeepEqual(copies, tc.copies) {
					t.Errorf("%s: derived Service %v, copies %v; want %v, %v", id, svc, copies, tc.svc, tc.copies)
				}
			}
			if len(d.Conflicts) != tc.conflicts {
				t.Errorf("conflicts %+v, want %d", d.Conflicts, tc.conflicts)
			}
			conv := cloneObs(obs)
			if _, left := converge(&conv, 6); len(left) != 0 {
				t.Fatalf("no convergence: %q", summary(left))
			}
			checkValid(t, Compute(conv))
		})
	}
}

// The copies of an invalid source (two ports of one name) still name each port once.
func TestCopyNamesEachPortOnce(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{exporter("a", 0, "10.1.0.1", port("http", 80, "")), importer("b")}}
	sl := obs.Clusters[0].EndpointSlices[0]
	sl.Ports = append(sl.Ports, sl.Ports[0])
	d := Compute(obs)
	checkValid(t, d)
	if _, copies := portsIn(t, d, "b"); !reflect.DeepEqual(copies["a"], []string{"http"}) {
		t.Errorf("copy ports %v", copies)
	}
}

func renderPorts(ps []mcsv1beta1.ServicePort) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += ","
		}
		out += renderPort(p)
	}
	return out
}
