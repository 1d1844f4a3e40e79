package diagnose

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

func faulty() *Report {
	s := healthy()
	memberOf(s, "member3").Services = nil // the derived Service is gone
	memberOf(s, "member2").ServedVersions = []string{"v1alpha1"}
	return Run(s)
}

func TestJUnitParsesBack(t *testing.T) {
	r := faulty()
	var b bytes.Buffer
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	var got JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Tests != len(r.Results) || got.Failures != r.Summary.Failed || got.Skipped != r.Summary.Warnings || got.Failures == 0 || got.Skipped == 0 {
		t.Errorf("tests %d failures %d skipped %d; report %d results, %+v", got.Tests, got.Failures, got.Skipped, len(r.Results), r.Summary)
	}
	cases := 0
	var failure *JUnitCase
	for _, s := range got.Suites {
		cases += len(s.Cases)
		for i, c := range s.Cases {
			if c.Failure != nil {
				failure = &s.Cases[i]
			}
		}
	}
	if cases != len(r.Results) || len(got.Suites) != 16 {
		t.Errorf("%d testcases in %d suites, want one per result (%d)", cases, len(got.Suites), len(r.Results))
	}
	if failure == nil || failure.Name != "member3 service/demo/derived-serve" || failure.ClassName != "diagnose.derived-service" ||
		!strings.Contains(failure.Failure.Message, "does not exist") || !strings.Contains(failure.Failure.Text, "kubectl mcs sync") {
		t.Errorf("failure %+v", failure)
	}
}

func TestPrintText(t *testing.T) {
	r := faulty()
	var plain, term bytes.Buffer
	if err := PrintText(&plain, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := PrintText(&term, r, TextOptions{Symbols: true, Color: true}); err != nil {
		t.Fatal(err)
	}
	p := plain.String()
	for _, want := range []string{
		"Derived Services (derived-service)\n",
		"  FAIL member3  service/demo/derived-serve: the derived Service\n       demo/derived-serve does not exist",
		"       fix: Run sync, which recreates the derived Service (or check that sync\n            --watch runs). The sync installed in \"member1\" runs and should have\n            done so; its logs say why it has not:\n" +
			"              kubectl mcs sync -n demo --contexts=member1,member2,member3\n" +
			"              kubectl --context member1 -n kubectl-mcs-system logs \\\n                -l app.kubernetes.io/name=kubectl-mcs-sync --tail=50 --prefix\n",
		"       fix: Upgrade to the v1beta1 CRDs unless Karmada needs these:\n              kubectl mcs init --contexts=member2\n",
		"  warn member2  crd/serviceexports.multicluster.x-k8s.io: serves only v1alpha1",
		"  ok   member1  context/member1: the API server answers\n",
		"passed, 1 failed, 1 warnings\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("plain output lacks %q:\n%s", want, p)
		}
	}
	for _, l := range strings.Split(p, "\n") {
		if len(l) > DefaultWidth {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
	if strings.ContainsAny(p, "✔✖\x1b") {
		t.Errorf("symbols or colour off a terminal:\n%s", p)
	}
	if s := term.String(); !strings.Contains(s, "\x1b[31m✖\x1b[0m member3") || !strings.Contains(s, "\x1b[32m✔\x1b[0m member1") || !strings.Contains(s, "\x1b[33m!\x1b[0m member2") {
		t.Errorf("terminal output:\n%s", s)
	}
}

// Prose fits the width; a word that does not fit the rest of a line starts the next one whole,
// and one wider than a line is broken after a '/' (a URL in an error), else overflows it alone.
func TestWrap(t *testing.T) {
	if got := wrap("a b c d", 0, 2, 3); got != "a b\n  c\n  d" {
		t.Errorf("prose: %q", got)
	}
	if got := wrap("see kubernetes.io/service-name=web now", 4, 4, 36); got != "see\n    kubernetes.io/service-name=web\n    now" {
		t.Errorf("a long word: %q", got)
	}
	if got := wrap("Get https://127.0.0.1:6443/api?timeout=5s: refused", 0, 2, 24); got != "Get https://\n  127.0.0.1:6443/api?\n  timeout=5s: refused" {
		t.Errorf("a URL: %q", got)
	}
	if got := wrap("a supercalifragilistic word", 0, 2, 10); got != "a\n  supercalifragilistic\n  word" {
		t.Errorf("a word without '/': %q", got)
	}
}

func TestReportJSON(t *testing.T) {
	b, err := json.Marshal(faulty())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	res := doc["results"].([]any)[0].(map[string]any)
	if doc["apiVersion"] != "mcs.kubectl.io/v1alpha1" || doc["kind"] != "DiagnoseReport" || doc["summary"].(map[string]any)["failed"] != 1.0 ||
		res["check"] != "sync" || res["severity"] != "ok" || len(doc["clusters"].([]any)) != 3 {
		t.Errorf("%s", b)
	}
}

// -o json marshals results in parallel (printers.Items): the bytes must be those of one
// json.MarshalIndent.
func TestReportJSONIsOneMarshalIndent(t *testing.T) {
	r := faulty()
	want, err := json.MarshalIndent(r, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := printers.Data(&got, "json", r); err != nil {
		t.Fatal(err)
	}
	if len(r.Results) < 2 || got.String() != string(want)+"\n" {
		t.Errorf("-o json differs from json.MarshalIndent:\n%s\nwant:\n%s", got.String(), want)
	}
}
