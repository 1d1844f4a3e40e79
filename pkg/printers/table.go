// Package printers renders kubectl-style tables (borderless, upper-case headers, columns three
// spaces apart) with text/tabwriter, as kubectl does, and yaml/json documents.
package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Table writes rows under headers the way `kubectl get` does. noHeaders drops the header line.
func Table(w io.Writer, headers []string, rows [][]string, noHeaders bool) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 3, ' ', 0)
	line := func(cells []string) error {
		_, err := io.WriteString(tw, strings.Join(cells, "\t")+"\n")
		return err
	}
	if !noHeaders {
		h := make([]string, len(headers))
		for i, s := range headers {
			h[i] = strings.ToUpper(s)
		}
		if err := line(h); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if err := line(r); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// An empty last cell leaves the padding of the one before it.
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(w, strings.TrimRight(l, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// Data writes v as yaml or json ("yaml" | "json").
func Data(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		return writeJSON(w, v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown format %q", format)
}
