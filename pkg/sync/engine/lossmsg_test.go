package engine

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// The report: member3 (oldest) exports http:80, admin:9090 and udp:5000; member1 the same but
// http on 81, then on 8080. The conflict names what member1 lost, the port nothing answers on,
// and the port whose traffic no longer reaches member1's endpoints; the condition every export
// carries says the same.
func TestPortConflictNamesWhatLost(t *testing.T) {
	for _, http := range []int32{81, 8080} {
		n := strconv.Itoa(int(http))
		obs := Observed{Now: now, Clusters: []ObservedCluster{
			exporter("member3", 0, "10.3.0.1", port("http", 80, corev1.ProtocolTCP), port("admin", 9090, corev1.ProtocolTCP), port("udp", 5000, corev1.ProtocolUDP)),
			exporter("member1", 5, "10.1.0.1", port("http", http, corev1.ProtocolTCP), port("admin", 9090, corev1.ProtocolTCP), port("udp", 5000, corev1.ProtocolUDP)),
			importer("member2"),
		}}
		d := Compute(obs)
		if len(d.Conflicts) != 1 {
			t.Fatalf("conflicts %+v, want one PortConflict", d.Conflicts)
		}
		c := d.Conflicts[0]
		want := `Conflicting ports. Using "http:80/TCP,admin:9090/TCP,udp:5000/UDP" from oldest service export in "member3". ` +
			`Not using "http:` + n + `/TCP" from "member1". Nothing answers on ` + n + `/TCP. ` +
			`Traffic to "http:80/TCP" does not reach "member1". 1/2 clusters disagree.`
		if c.Message != want {
			t.Errorf("message\n got %q\nwant %q", c.Message, want)
		}
		if want := []LosingExport{{Cluster: "member1", Value: "http:" + n + "/TCP", Unserved: "http:80/TCP"}}; !reflect.DeepEqual(c.Losing, want) {
			t.Errorf("losing %+v, want %+v", c.Losing, want)
		}
		if want := []string{n + "/TCP"}; !reflect.DeepEqual(c.Unanswered, want) {
			t.Errorf("unanswered %v, want %v", c.Unanswered, want)
		}
		cond := findCond(d.Clusters["member1"].ExportConditions[nn("shop", "cart")], mcsv1beta1.ServiceExportConditionConflict)
		if cond == nil || cond.Message != want {
			t.Errorf("member1's Conflict condition %+v, want the message", cond)
		}
	}
}

// A losing value held by several exports is said once, with every cluster; different values
// each with theirs, sorted, so that the message is the same whatever the order of the input.
func TestConflictGroupsLosingValues(t *testing.T) {
	obs := Observed{Now: now}
	for i, id := range []string{"m1", "m2", "m3", "m4"} {
		svc, exp := mkService("demo", "serve"), mkExport("demo", "serve", i)
		switch id {
		case "m2", "m4":
			svc.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
		}
		obs.Clusters = append(obs.Clusters, member(id, svc, exp))
	}
	obs.Clusters[2].Services[0].Spec.Ports = []corev1.ServicePort{port("http", 80, corev1.ProtocolTCP), port("metrics", 9100, corev1.ProtocolTCP)}
	obs.Clusters[3].Services[0].Spec.Ports = []corev1.ServicePort{port("http", 8080, corev1.ProtocolTCP)}
	d := Compute(obs)
	got := map[string]string{}
	for _, c := range d.Conflicts {
		got[c.Reason] = c.Message
	}
	want := map[string]string{
		"InternalTrafficPolicyConflict": `Conflicting internal traffic policy. Using "Cluster" from oldest service export in "m1". Not using "Local" from "m2", "m4". 2/4 clusters disagree.`,
		"PortConflict": `Conflicting ports. Using "http:80/TCP" from oldest service export in "m1" and "metrics:9100/TCP" from service export in "m3". ` +
			`Not using "http:8080/TCP" from "m4". Nothing answers on 8080/TCP. Traffic to "http:80/TCP,metrics:9100/TCP" does not reach "m4". 2/4 clusters disagree.`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n got %q\nwant %q", got, want)
	}
	reversed := Observed{Now: now}
	for i := len(obs.Clusters) - 1; i >= 0; i-- {
		reversed.Clusters = append(reversed.Clusters, obs.Clusters[i])
	}
	if r := Compute(reversed); !reflect.DeepEqual(r.Conflicts, d.Conflicts) {
		t.Errorf("the input's order changed the conflicts:\n%+v\n%+v", r.Conflicts, d.Conflicts)
	}
}

// However many exports lose, and however long their values, the Conflict condition fits the
// apiserver's limit on a condition message, and still ends with the counts.
func TestConflictConditionFitsTheLimit(t *testing.T) {
	obs := Observed{Now: now}
	long := strings.Repeat("v", 60)
	for i := 0; i < 300; i++ {
		id := "member-" + strconv.Itoa(i)
		svc, exp := mkService("demo", "serve"), mkExport("demo", "serve", i)
		if i > 0 {
			svc.Spec.ClusterIP = corev1.ClusterIPNone
			svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			svc.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
			svc.Spec.TrafficDistribution = ptr("PreferClose")
			svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
			svc.Spec.Ports = []corev1.ServicePort{port("p"+strconv.Itoa(i), int32(1000+i), corev1.ProtocolTCP)}
			exp.Spec.ExportedLabels = map[string]string{"l": long + strconv.Itoa(i)}
			exp.Spec.ExportedAnnotations = map[string]string{"a": "ü" + long + strconv.Itoa(i)}
		}
		obs.Clusters = append(obs.Clusters, member(id, svc, exp))
	}
	d := Compute(obs)
	if len(d.Conflicts) < 7 {
		t.Fatalf("%d conflicts, want every reason", len(d.Conflicts))
	}
	for _, c := range d.Conflicts {
		if !strings.HasSuffix(c.Message, " 299/300 clusters disagree.") || len(c.Message) > maxConflictMessage || !utf8Valid(c.Message) {
			t.Errorf("%s: %d bytes, ends %q", c.Reason, len(c.Message), c.Message[max(0, len(c.Message)-60):])
		}
	}
	cond := findCond(d.Clusters["member-0"].ExportConditions[nn("demo", "serve")], mcsv1beta1.ServiceExportConditionConflict)
	if cond == nil || len(cond.Message) > 32768 {
		t.Fatalf("condition message of %d bytes, over the apiserver's 32768", len(cond.Message))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
