package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	cliprinters "k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/parallel"
)

// Items is a document whose last JSON field is a long array (a status list's items, a report's
// results). Its -o json is marshalled element by element on every CPU: at 10,000 services one
// MarshalIndent of the whole was most of a second, on one CPU, after everything else was done.
type Items interface {
	// SplitItems returns the document with that array empty (and not null), the number of its
	// elements, and a pointer to element i.
	SplitItems() (head any, n int, item func(i int) any)
}

// JSONPrinter is kubectl's -o json printer, with the fast path for Items.
type JSONPrinter struct{}

// PrintObj writes obj as cli-runtime's JSONPrinter does, byte for byte.
func (JSONPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	if _, ok := obj.(Items); !ok || obj.GetObjectKind().GroupVersionKind().Empty() {
		return (&cliprinters.JSONPrinter{}).PrintObj(obj, w)
	}
	return writeJSON(w, obj)
}

// writeJSON writes json.MarshalIndent(v, "", "    ") and a newline.
func writeJSON(w io.Writer, v any) error {
	if l, ok := v.(Items); ok {
		if head, n, item := l.SplitItems(); n > 0 {
			return writeItems(w, head, n, item)
		}
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeItems writes the head up to its empty array, then the elements, each indented two
// levels as MarshalIndent indents them inside the whole.
func writeItems(w io.Writer, head any, n int, item func(int) any) error {
	h, err := json.MarshalIndent(head, "", "    ")
	if err != nil {
		return err
	}
	const tail = "[]\n}"
	if !bytes.HasSuffix(h, []byte(tail)) {
		return fmt.Errorf("printers: %T: the array of an Items document must be its last field, and empty in its head", head)
	}
	const indent = "        "
	parts := make([][]byte, n)
	errs := make([]error, n)
	parallel.For(n, func(i int) { parts[i], errs[i] = json.MarshalIndent(item(i), indent, "    ") })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	buf.Write(h[:len(h)-len(tail)])
	buf.WriteString("[\n")
	for i, p := range parts {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString(indent)
		buf.Write(p)
		// Written in pieces: the whole document need not be held twice.
		if buf.Len() > 1<<20 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	buf.WriteString("\n    ]\n}\n")
	_, err = w.Write(buf.Bytes())
	return err
}
