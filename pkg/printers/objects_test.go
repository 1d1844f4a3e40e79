package printers

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func written(cluster, ns, name string) Written {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app.kubernetes.io/managed-by": "kubectl-mcs"},
			"managedFields": []any{map[string]any{"manager": "kubectl-mcs"}}},
		"spec": map[string]any{"exportedLabels": map[string]any{"tier": "<web> & co"}},
	}}
	if ns == "" {
		unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
	}
	return Written{Cluster: cluster, Resource: "serviceexport.multicluster.x-k8s.io", Object: u}
}

func TestPrintLine(t *testing.T) {
	for _, tc := range []struct {
		format, op string
		w          Written
		want       string
	}{
		{"", "serverside-applied", written("member1", "demo", "serve"), "member1: serviceexport.multicluster.x-k8s.io/serve serverside-applied -n demo\n"},
		{"", "deleted (server dry run)", written("member2", "", "crd"), "member2: serviceexport.multicluster.x-k8s.io/crd deleted (server dry run)\n"},
		{"name", "serverside-applied", written("member1", "demo", "serve"), "member1: serviceexport.multicluster.x-k8s.io/serve\n"},
		// unexpose prints its lines whatever -o says: there is no object left to show
		{"yaml", "deleted", written("member1", "demo", "serve"), "member1: serviceexport.multicluster.x-k8s.io/serve deleted -n demo\n"},
	} {
		var b bytes.Buffer
		f := OutputFlags{Format: tc.format}
		if err := f.PrintLine(&b, tc.w, tc.op); err != nil || b.String() != tc.want {
			t.Errorf("-o %q: %q, %v; want %q", tc.format, b.String(), err, tc.want)
		}
	}
}

func TestPrintObjects(t *testing.T) {
	ws := []Written{written("member1", "demo", "serve"), written("member2", "demo", "serve")}

	var b bytes.Buffer
	if err := (&OutputFlags{Format: "yaml"}).PrintObjects(&b, ws); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "---\n")
	if len(docs) != 3 || docs[0] != "" || !strings.HasPrefix(docs[1], "# cluster: member1\napiVersion: multicluster.x-k8s.io/v1beta1\n") ||
		!strings.HasPrefix(docs[2], "# cluster: member2\n") || strings.Contains(b.String(), "managedFields") {
		t.Errorf("yaml:\n%s", b.String())
	}

	// json: one List, indented four spaces, keys sorted and HTML escaped as encoding/json does:
	// the bytes kubectl-mcs printed before it went through cli-runtime's JSONPrinter.
	b.Reset()
	if err := (&OutputFlags{Format: "json"}).PrintObjects(&b, ws); err != nil {
		t.Fatal(err)
	}
	items := []any{}
	for _, w := range ws {
		c := w.Object.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		items = append(items, c.Object)
	}
	want, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
	if b.String() != string(want)+"\n" {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), want)
	}
	if ws[0].Object.Object["metadata"].(map[string]any)["managedFields"] == nil {
		t.Error("printing changed the object itself")
	}

	b.Reset()
	if err := (&OutputFlags{Format: "json"}).PrintObjects(&b, nil); err != nil || b.String() != "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\"\n}\n" {
		t.Errorf("empty json: %q %v", b.String(), err)
	}
	for _, format := range []string{"", "name"} {
		b.Reset()
		if err := (&OutputFlags{Format: format}).PrintObjects(&b, ws); err != nil || b.Len() != 0 {
			t.Errorf("-o %q printed objects: %q %v", format, b.String(), err)
		}
	}
}

func TestOutputFlags(t *testing.T) {
	for _, tc := range []struct {
		f       OutputFlags
		format  string
		refused string
		usage   string
	}{
		{OutputFlags{}, "name", "", "Output format. One of: (json, yaml, name)."},
		{OutputFlags{}, "wide", `--output "wide": must be one of json, yaml, name`, ""},
		{OutputFlags{}, "go-template={{.kind}}", "go-template is not supported", ""},
		{OutputFlags{Formats: []string{"yaml", "json"}, Usage: "the plan"}, "json", "", "the plan"},
		{OutputFlags{Formats: []string{"yaml", "json"}}, "name", `--output "name": must be one of yaml, json`, ""},
	} {
		cmd := &cobra.Command{Use: "x"}
		tc.f.AddFlags(cmd)
		if err := cmd.Flags().Parse([]string{"-o", tc.format}); err != nil {
			t.Fatal(err)
		}
		err := tc.f.Validate()
		if (tc.refused == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.refused)) {
			t.Errorf("%v -o %q: %v, want %q", tc.f.Formats, tc.format, err, tc.refused)
		}
		if tc.usage != "" && cmd.Flags().Lookup("output").Usage != tc.usage {
			t.Errorf("usage %q", cmd.Flags().Lookup("output").Usage)
		}
		if got := tc.f.Documents(); got != (tc.format == "json" || tc.format == "yaml") {
			t.Errorf("-o %q: Documents() = %v", tc.format, got)
		}
	}
}
