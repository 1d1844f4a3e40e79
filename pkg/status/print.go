package status

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// portsShort renders ports like kubectl get svc: 80/TCP,9090/TCP.
func portsShort(ps []Port) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, strconv.Itoa(int(p.Port))+"/"+p.Protocol)
	}
	return joinOr(parts, "<none>")
}

// PortsString renders ports with their names: http:80/TCP,9090/TCP.
func PortsString(ps []Port) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		s := strconv.Itoa(int(p.Port))
		if p.Protocol != "" {
			s += "/" + p.Protocol
		}
		if p.Name != "" {
			s = p.Name + ":" + s
		}
		parts = append(parts, s)
	}
	return joinOr(parts, "<none>")
}

// EndpointsString renders "member1=2/2,member2=0/1"; a cluster that cannot be read shows its
// last-known counts as "member3=1/1(stale)", or "member3=?" when nothing is known.
func EndpointsString(es []SourceEndpoints) string {
	parts := make([]string, 0, len(es))
	for _, e := range es {
		switch {
		case e.LastKnown && e.Total == 0:
			parts = append(parts, e.Cluster+"=?")
		case e.LastKnown:
			parts = append(parts, fmt.Sprintf("%s=%d/%d(stale)", e.Cluster, e.Ready, e.Total))
		default:
			parts = append(parts, fmt.Sprintf("%s=%d/%d", e.Cluster, e.Ready, e.Total))
		}
	}
	return joinOr(parts, "<none>")
}

// ConflictsString renders "TypeConflict(winner=member2),PortConflict(winner=member2)".
func ConflictsString(cs []ConflictStatus) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s(winner=%s)", c.Reason, c.Winner))
	}
	return joinOr(parts, "<none>")
}

// Age renders the time since t like kubectl's AGE column.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// Describe writes one service the way kubectl describe does: the summary, the per-cluster
// breakdown, the conflicts and every ServiceExport's conditions with their messages.
func Describe(w io.Writer, l *MultiClusterServiceStatusList, it MultiClusterServiceStatus, o PrintOptions) error {
	var b strings.Builder
	field := func(name, value string) { fmt.Fprintf(&b, "%-16s%s\n", name+":", value) }
	field("Name", it.Name)
	field("Namespace", it.Namespace)
	status := string(it.Health)
	if o.Color && color(it.Health) != "" {
		status = color(it.Health) + status + colorReset
	}
	field("Status", status)
	field("Type", orNone(it.Type))
	field("Ports", PortsString(it.Ports))
	field("Exported from", joinOr(it.ExportingClusters, "<none>"))
	field("Imported in", joinOr(it.ImportingClusters, "<none>"))
	field("Endpoints", EndpointsString(it.Endpoints))
	field("DNS name", orNone(it.DNSName))
	field("Age", Age(it.CreationTimestamp, o.Now))
	if len(it.Problems) == 0 {
		field("Problems", "<none>")
	} else {
		b.WriteString("Problems:\n")
		for _, p := range it.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	fmt.Fprintln(w, "Clusters:")
	var rows [][]string
	for _, c := range it.Clusters {
		rows = append(rows, clusterRow(l, c))
	}
	if err := indented(w, []string{"cluster", "state", "export", "service", "endpoints", "import", "clusterset-ip", "derived-service", "imported-endpoints", "id-from"}, rows); err != nil {
		return err
	}

	if len(it.Conflicts) == 0 {
		fmt.Fprintln(w, "Conflicts:       <none>")
	} else {
		fmt.Fprintln(w, "Conflicts:")
		rows = rows[:0]
		for _, c := range it.Conflicts {
			rows = append(rows, []string{c.Reason, c.Winner, joinOr(c.Disagreeing, "<none>"), c.Message})
		}
		if err := indented(w, []string{"reason", "winner", "disagreeing", "message"}, rows); err != nil {
			return err
		}
	}

	rows = rows[:0]
	for _, c := range it.Clusters {
		if c.Export == nil {
			continue
		}
		conds := append([]metav1.Condition(nil), c.Export.Conditions...)
		sort.SliceStable(conds, func(i, j int) bool { return condOrder(conds[i].Type) < condOrder(conds[j].Type) })
		if len(conds) == 0 {
			rows = append(rows, []string{c.Cluster, "<none>", "", "", "", "no conditions: no MCS controller has looked at this export"})
		}
		for _, cond := range conds {
			rows = append(rows, []string{c.Cluster, cond.Type, string(cond.Status), cond.Reason, Age(cond.LastTransitionTime, o.Now), cond.Message})
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "Export conditions: <none>")
		return nil
	}
	fmt.Fprintln(w, "Export conditions:")
	return indented(w, []string{"cluster", "type", "status", "reason", "age", "message"}, rows)
}

func condOrder(t string) int {
	switch t {
	case "Valid":
		return 0
	case "Ready":
		return 1
	case "Conflict":
		return 2
	}
	return 3
}

func clusterRow(l *MultiClusterServiceStatusList, c ClusterStatus) []string {
	state := string(c.State)
	for _, ci := range l.Clusters {
		if ci.Name == c.Cluster && ci.Message != "" && c.State != snapshot.Reachable {
			state += " (" + ci.Message + ")"
		}
	}
	export, svc, eps, ip, derived := "-", "-", "-", "-", "-"
	if e := c.Export; e != nil {
		export = "Valid"
		if !e.Valid {
			export = orNone(e.InvalidReason)
		}
	}
	if s := c.Service; s != nil {
		svc = s.Type
	}
	if e := c.Endpoints; e != nil {
		eps = fmt.Sprintf("%d/%d", e.Ready, e.Total)
	}
	imp := string(c.ImportState)
	if i := c.Import; i != nil {
		if !i.Managed {
			imp += "(unmanaged)"
		}
		ip = joinOr(i.IPs, "<none>")
		if i.Type == "Headless" {
			ip = "None"
		}
		derived = orNone(i.DerivedService)
		if i.DerivedService != "" && !i.DerivedServiceExists {
			derived += "(missing)"
		}
	}
	var imported []string
	for _, e := range c.ImportedEndpoints {
		imported = append(imported, fmt.Sprintf("%s=%d/%d", e.Cluster, e.Ready, e.Total))
	}
	return []string{c.Cluster, state, export, svc, eps, orNone(imp), ip, derived, joinOr(imported, "-"), idSource(l, c.Cluster)}
}

// indented writes a table two spaces in, as kubectl describe nests its sections.
func indented(w io.Writer, headers []string, rows [][]string) error {
	var buf bytes.Buffer
	if err := printers.Table(&buf, headers, rows, false); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			if _, err := io.WriteString(w, "  "+line); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeProblems(b *strings.Builder, problems []string) {
	if len(problems) == 0 {
		fmt.Fprintf(b, "%-21s<none>\n", "Problems:")
		return
	}
	b.WriteString("Problems:\n")
	for _, p := range problems {
		fmt.Fprintf(b, "  %s\n", p)
	}
}

func describeConditions(w io.Writer, conds []metav1.Condition, now time.Time) error {
	if len(conds) == 0 {
		_, err := fmt.Fprintf(w, "%-21s<none>\n", "Conditions:")
		return err
	}
	fmt.Fprintln(w, "Conditions:")
	rows := make([][]string, 0, len(conds))
	for _, c := range conds {
		rows = append(rows, []string{c.Type, string(c.Status), c.Reason, Age(c.LastTransitionTime, now), c.Message})
	}
	return indented(w, []string{"type", "status", "reason", "age", "message"}, rows)
}
