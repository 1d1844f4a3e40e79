package status

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

func withConflict() *MultiClusterServiceStatusList {
	cs := seed()
	cs[0].ServiceExports = append(cs[0].ServiceExports, export("demo", "web", 10))
	cs[0].Services = append(cs[0].Services, service("demo", "web", false))
	web1, web2 := slice("demo", "web", "web-1", true), slice("demo", "web", "web-2", true)
	cs[0].EndpointSlices = append(cs[0].EndpointSlices, web1)
	cs[1].ServiceExports = append(cs[1].ServiceExports, export("demo", "web", 5))
	cs[1].Services = append(cs[1].Services, service("demo", "web", true))
	cs[1].EndpointSlices = append(cs[1].EndpointSlices, web2)
	for i := range cs {
		cs[i].ServiceImports = append(cs[i].ServiceImports, serviceImport("demo", "web", mcsv1beta1.Headless, "", "member1", "member2"))
		cs[i].Services = append(cs[i].Services, derived("demo", "web", ""))
		cs[i].EndpointSlices = append(cs[i].EndpointSlices, copyOf(web1, "web", "member1"), copyOf(web2, "web", "member2"))
	}
	cs[0].ServiceExports[0].Status.Conditions = []metav1.Condition{
		{Type: "Conflict", Status: "False", Reason: "NoConflicts", Message: "No conflicts.", LastTransitionTime: at(1)},
		{Type: "Valid", Status: "True", Reason: "Valid", Message: "Service is exported.", LastTransitionTime: at(1)},
	}
	return Build(cs)
}

// cellOf returns a row's cell under a column of Headers(wide).
func cellOf(t *testing.T, row []string, wide bool, column string) string {
	t.Helper()
	for i, h := range Headers(wide) {
		if h == column {
			return row[i]
		}
	}
	t.Fatalf("no column %q", column)
	return ""
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := PrintTable(&b, withConflict(), PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header + 2 rows:\n%s", b.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "NAMESPACE NAME STATUS EXPORTED READY AGE" {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "demo serve Healthy 1/3 2/2 89m" {
		t.Errorf("healthy row %q", lines[1])
	}
	// No marker field of its own: STATUS says it, and every row starts with its namespace.
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "demo web Conflict 2/3 2/2 85m" {
		t.Errorf("conflict row %q", lines[2])
	}
	for _, l := range lines {
		if strings.HasPrefix(l, " ") || len(l) > 80 {
			t.Errorf("line indented or over 80 columns: %q", l)
		}
	}
	if strings.Contains(b.String(), "\x1b[") {
		t.Error("colour without Color")
	}

	b.Reset()
	_ = PrintTable(&b, withConflict(), PrintOptions{Now: now, Color: true, NoHeaders: true})
	lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "\x1b[") || !strings.HasPrefix(lines[1], colorRed) || !strings.HasSuffix(lines[1], colorReset) {
		t.Errorf("--no-headers with colour: only the conflict row in red:\n%q", lines)
	}
	if f := strings.Fields(strings.TrimPrefix(lines[1], colorRed)); f[0] != "demo" || f[1] != "web" {
		t.Errorf("--no-headers: the first field is the namespace: %q", lines[1])
	}
}

// A clusterset of 3 with long names still fits 80 columns: the default table counts clusters
// rather than listing them.
func TestTableWidthDoesNotGrowWithClusters(t *testing.T) {
	l := withConflict()
	for i := range l.Items {
		for j := range l.Items[i].Clusters {
			l.Items[i].Clusters[j].Cluster = "a-much-longer-cluster-name-" + l.Items[i].Clusters[j].Cluster
		}
	}
	var b bytes.Buffer
	if err := PrintTable(&b, l, PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if len(line) > 80 {
			t.Errorf("%d columns: %q", len(line), line)
		}
	}
}

func TestWideTable(t *testing.T) {
	var b bytes.Buffer
	l := withConflict()
	l.Clusters[0].IDSource, l.Clusters[1].IDSource, l.Clusters[2].IDSource = "clusterproperty", "flag", "context"
	if err := PrintTable(&b, l, PrintOptions{Now: now, Wide: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "NAMESPACE NAME STATUS EXPORTED READY AGE "+
		"IMPORTED PORTS TYPE CONFLICTS EXPORTED-FROM IMPORTED-IN ENDPOINTS-FROM CLUSTERSET-IPS DERIVED-SERVICE IMPORTS DNS-NAME ID-SOURCES" {
		t.Errorf("header %q", got)
	}
	ids := "member1=clusterproperty,member2=flag,member3=context"
	want := "demo serve Healthy 1/3 2/2 89m 3/3 http:80/TCP ClusterSetIP <none> member1 member1,member2,member3 member1=2/2 " +
		"member1=10.96.0.1,member2=10.96.0.2,member3=10.96.0.3 derived-serve member1=Ready,member2=Ready,member3=Ready serve.demo.svc.clusterset.local " + ids
	if got := strings.Join(strings.Fields(lines[1]), " "); got != want {
		t.Errorf("wide row\n%q, want\n%q", got, want)
	}
	want = "demo web Conflict 2/3 2/2 85m 3/3 http:80/TCP Headless TypeConflict(winner=member2) member1,member2 member1,member2,member3 member1=1/1,member2=1/1 " +
		"None derived-web member1=Ready,member2=Ready,member3=Ready web.demo.svc.clusterset.local " + ids
	if got := strings.Join(strings.Fields(lines[2]), " "); got != want {
		t.Errorf("headless wide row\n%q, want\n%q", got, want)
	}
}

func TestDescribe(t *testing.T) {
	l := withConflict()
	l.Clusters[1].IDSource = "clusterproperty"
	SetDNSNames(l, "mcs.example")
	var b bytes.Buffer
	if err := Describe(&b, l, l.Items[1], PrintOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Name:           web\n", "Status:         Conflict\n", "Type:           Headless\n",
		"Problems:\n  Conflicting type. Using \"Headless\" from oldest service export in \"member2\".",
		"DNS name:       web.demo.svc.mcs.example\n",
		// Each cluster's part is a block of fields, as kubectl describe nests a section.
		"Clusters:\n  member1:\n    State:                Reachable\n    Export:               Valid\n" +
			"    Service:              ClusterIP, 1/1 endpoints ready\n    Import:               Ready\n" +
			"    Clusterset IP:        None\n    Derived Service:      derived-web\n" +
			"    Imported endpoints:   member1=1/1, member2=1/1\n    ID from:              <none>\n  member2:\n",
		"    Service:              Headless, 1/1 endpoints ready\n",
		"    ID from:              clusterproperty\n",
		// A conflict's message under its row, wrapped.
		"Conflicts:\n  REASON         WINNER    DISAGREEING\n  TypeConflict   member2   member1\n    Conflicting type.",
		"Export conditions:\n",
		"  member1   <none>", // member1's export of web has no conditions
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	_ = Describe(&b, l, l.Items[0], PrintOptions{Now: now})
	// Conditions in the order Valid, Ready, Conflict, with their messages.
	if !strings.Contains(b.String(), "  member1   Valid      True     Valid         89m\n    Service is exported.\n  member1   Conflict   False    NoConflicts   89m\n    No conflicts.\n") {
		t.Errorf("conditions:\n%s", b.String())
	}
}

// TestSchema pins the documented JSON field names (docs/output.md, "Status output schema").
func TestSchema(t *testing.T) {
	b, err := json.Marshal(withConflict())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keysOf := func(v any) string {
		m := v.(map[string]any)
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	if got := keysOf(doc); got != "apiVersion,clusters,items,kind" {
		t.Errorf("list keys %s", got)
	}
	if doc["apiVersion"] != "mcs.kubectl.io/v1alpha1" || doc["kind"] != "MultiClusterServiceStatusList" {
		t.Errorf("apiVersion/kind %v %v", doc["apiVersion"], doc["kind"])
	}
	if got := keysOf(doc["clusters"].([]any)[0]); got != "context,mcsAPIVersion,name,state" {
		t.Errorf("cluster keys %s", got)
	}
	web := doc["items"].([]any)[1]
	if got := keysOf(web); got != "clusters,conflicts,creationTimestamp,dnsName,endpoints,exportingClusters,health,importingClusters,name,namespace,ports,problems,type" {
		t.Errorf("item keys %s", got)
	}
	if got := keysOf(web.(map[string]any)["conflicts"].([]any)[0]); got != "disagreeing,losing,message,reason,winner" {
		t.Errorf("conflict keys %s", got)
	}
	if got := keysOf(web.(map[string]any)["endpoints"].([]any)[0]); got != "cluster,ready,total" {
		t.Errorf("endpoint keys %s", got)
	}
	c := doc["items"].([]any)[0].(map[string]any)["clusters"].([]any)[0].(map[string]any)
	if got := keysOf(c); got != "cluster,copies,endpoints,export,import,importState,importedEndpoints,namespaceExists,service,state" {
		t.Errorf("cluster breakdown keys %s", got)
	}
	if got := keysOf(c["copies"].([]any)[0]); got != "source,state" {
		t.Errorf("copies keys %s", got)
	}
	if got := keysOf(c["export"]); got != "conditions,creationTimestamp,managed,valid" {
		t.Errorf("export keys %s", got)
	}
	if got := keysOf(c["import"]); got != "derivedService,derivedServiceExists,derivedServiceIPs,ips,managed,ports,sources,type" {
		t.Errorf("import keys %s", got)
	}
	// Empty lists are [] rather than null, so that scripts can iterate without checks.
	serve := doc["items"].([]any)[0].(map[string]any)
	if _, ok := serve["conflicts"].([]any); !ok {
		t.Errorf("conflicts of a healthy service: %#v", serve["conflicts"])
	}
}

func TestDeepCopyObject(t *testing.T) {
	l := withConflict()
	c := l.DeepCopyObject().(*MultiClusterServiceStatusList)
	c.Items[0].Name = "changed"
	if l.Items[0].Name == "changed" || c.Kind != KindList || len(c.Items) != 2 {
		t.Error("DeepCopyObject is not a deep copy")
	}
}

// -o json marshals items in parallel (printers.Items): the bytes must be kubectl's.
func TestJSONIsKubectls(t *testing.T) {
	l := withConflict()
	var want, got bytes.Buffer
	if err := (&cliprinters.JSONPrinter{}).PrintObj(l, &want); err != nil {
		t.Fatal(err)
	}
	if err := (printers.JSONPrinter{}).PrintObj(l, &got); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) < 2 || got.String() != want.String() {
		t.Errorf("-o json differs from kubectl's JSONPrinter:\n%s\nwant:\n%s", got.String(), want.String())
	}
}
