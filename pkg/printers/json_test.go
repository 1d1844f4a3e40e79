package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
)

type elem struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Nested []elem            `json:"nested,omitempty"`
}

type doc struct {
	metav1.TypeMeta `json:",inline"`
	Clusters        []string `json:"clusters"`
	Items           []elem   `json:"items"`
}

func (d *doc) DeepCopyObject() runtime.Object { c := *d; return &c }

func (d *doc) SplitItems() (any, int, func(int) any) {
	head := *d
	head.Items = []elem{}
	return &head, len(d.Items), func(i int) any { return &d.Items[i] }
}

// Items must print exactly what kubectl's JSONPrinter prints: scripts diff and hash it.
func TestJSONPrinterMatchesKubectls(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3000} {
		d := &doc{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}, Clusters: []string{"a", "b"}, Items: []elem{}}
		for i := range n {
			d.Items = append(d.Items, elem{Name: fmt.Sprintf("<svc-%d> & \u2028é", i), Labels: map[string]string{"z": "1", "a": "2"},
				Nested: []elem{{Name: "x"}, {Name: "y", Labels: map[string]string{}}}})
		}
		var want, got, data bytes.Buffer
		if err := (&cliprinters.JSONPrinter{}).PrintObj(d, &want); err != nil {
			t.Fatal(err)
		}
		if err := (JSONPrinter{}).PrintObj(d, &got); err != nil {
			t.Fatal(err)
		}
		if err := Data(&data, "json", d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d items: JSONPrinter differs from kubectl's:\n%s\nwant:\n%s", n, head(got.String()), head(want.String()))
		}
		if !bytes.Equal(data.Bytes(), want.Bytes()) {
			t.Errorf("%d items: Data differs from kubectl's JSONPrinter:\n%s\nwant:\n%s", n, head(data.String()), head(want.String()))
		}
		if !json.Valid(got.Bytes()) {
			t.Errorf("%d items: not valid JSON", n)
		}
	}
}

func TestJSONPrinterReportsAnItemThatDoesNotMarshal(t *testing.T) {
	var out bytes.Buffer
	err := writeJSON(&out, &badDoc{Items: []any{1, func() {}}})
	if err == nil {
		t.Fatal("no error for an element that does not marshal")
	}
	if out.Len() != 0 {
		t.Errorf("wrote %d bytes before failing; want nothing half written", out.Len())
	}
}

type badDoc struct {
	Items []any `json:"items"`
}

func (d *badDoc) SplitItems() (any, int, func(int) any) {
	return &badDoc{Items: []any{}}, len(d.Items), func(i int) any { return d.Items[i] }
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}
