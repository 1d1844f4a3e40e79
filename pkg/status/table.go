package status

// The status table: counts by default, so that a row does not grow with the clusterset or the
// service's ports and a typical service fits 80 columns (with room for a longer namespace); the
// importing clusters' count, the ports and the per-cluster lists with -o wide. A cluster that
// cannot import the service makes it Degraded, which STATUS says.

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// PrintOptions control the human-readable output.
type PrintOptions struct {
	Wide      bool
	NoHeaders bool
	// Color paints the rows that need attention: red for Conflict, yellow for Degraded and
	// Unknown.
	Color bool
	// Now is the reference for AGE.
	Now time.Time
}

const (
	colorRed    = "\x1b[31m"
	colorYellow = "\x1b[33m"
	colorReset  = "\x1b[0m"
)

func color(h Health) string {
	switch h {
	case Conflict:
		return colorRed
	case Degraded, Unknown:
		return colorYellow
	}
	return ""
}

// Headers are the table's column names. -o wide appends columns and never moves the default
// ones, so a script reading them by position reads both.
func Headers(wide bool) []string {
	h := []string{"namespace", "name", "status", "exported", "ready", "age"}
	if wide {
		h = append(h, "imported", "ports", "type", "conflicts", "exported-from", "imported-in", "endpoints-from", "clusterset-ips", "derived-service", "imports", "dns-name", "id-sources")
	}
	return h
}

// Row renders one item as table cells: EXPORTED (and IMPORTED) count clusters out of the
// clusterset, READY sums ready/total endpoints over the exporting clusters.
func Row(it MultiClusterServiceStatus, wide bool, now time.Time) []string {
	n := len(it.Clusters)
	r := []string{it.Namespace, it.Name, string(it.Health),
		fmt.Sprintf("%d/%d", len(it.ExportingClusters), n), endpointsTotal(it.Endpoints), Age(it.CreationTimestamp, now)}
	if !wide {
		return r
	}
	// Clusters that could not be read are listed as such: they may import it, or not.
	unread := map[string]string{}
	for _, c := range it.Clusters {
		if c.State != snapshot.Reachable {
			unread[c.Cluster] = c.Cluster + "(" + string(c.State) + ")"
		}
	}
	importing := []string{}
	for _, id := range it.ImportingClusters {
		if u, ok := unread[id]; ok {
			importing = append(importing, u)
			delete(unread, id)
			continue
		}
		importing = append(importing, id)
	}
	for _, c := range it.Clusters {
		if u, ok := unread[c.Cluster]; ok {
			importing = append(importing, u)
		}
	}
	var ips, derived, imports []string
	seenDerived := map[string]bool{}
	for _, c := range it.Clusters {
		imports = append(imports, c.Cluster+"="+string(c.ImportState))
		if c.Import == nil {
			continue
		}
		if len(c.Import.IPs) > 0 {
			ips = append(ips, c.Cluster+"="+strings.Join(c.Import.IPs, "|"))
		}
		if d := c.Import.DerivedService; d != "" && !seenDerived[d] {
			seenDerived[d] = true
			derived = append(derived, d)
		}
	}
	ipCell := joinOr(ips, "<none>")
	if it.Type == "Headless" && len(ips) == 0 {
		ipCell = "None"
	}
	return append(r, fmt.Sprintf("%d/%d", len(it.ImportingClusters), n), PortsString(it.Ports), orNone(it.Type), ConflictsString(it.Conflicts), joinOr(it.ExportingClusters, "<none>"), joinOr(importing, "<none>"),
		EndpointsString(it.Endpoints), ipCell, joinOr(derived, "<none>"), joinOr(imports, "<none>"), orNone(it.DNSName))
}

// endpointsTotal sums the exporting clusters' endpoints: "3/4", "(stale)" when a cluster's
// counts are last-known ones, "?" added when one has none known.
func endpointsTotal(es []SourceEndpoints) string {
	if len(es) == 0 {
		return "<none>"
	}
	ready, total, stale, unknown := 0, 0, false, false
	for _, e := range es {
		ready, total = ready+e.Ready, total+e.Total
		stale = stale || e.LastKnown
		unknown = unknown || (e.LastKnown && e.Total == 0)
	}
	s := fmt.Sprintf("%d/%d", ready, total)
	if unknown {
		s += "+?"
	}
	if stale {
		s += "(stale)"
	}
	return s
}

// PrintTable writes the list as a kubectl-style table.
func PrintTable(w io.Writer, l *MultiClusterServiceStatusList, o PrintOptions) error {
	rows := make([][]string, 0, len(l.Items))
	health := make([]Health, 0, len(l.Items))
	for _, it := range l.Items {
		row := Row(it, o.Wide, o.Now)
		if o.Wide {
			row = append(row, IDSources(l))
		}
		rows = append(rows, row)
		health = append(health, it.Health)
	}
	return table(w, Headers(o.Wide), rows, health, o)
}

// table renders rows and paints each flagged row's line: tabwriter never
// wraps, so line i+header is row i.
func table(w io.Writer, headers []string, rows [][]string, health []Health, o PrintOptions) error {
	var buf bytes.Buffer
	if err := printers.Table(&buf, headers, rows, o.NoHeaders); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	first := 1
	if o.NoHeaders {
		first = 0
	}
	for i, line := range lines {
		if line == "" {
			continue
		}
		if r := i - first; o.Color && r >= 0 && r < len(health) && color(health[r]) != "" {
			line = color(health[r]) + strings.TrimSuffix(line, "\n") + colorReset + "\n"
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
