package status

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

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

// describeAt is the column a description's values start at, as kubectl describe aligns them.
const describeAt = 16

// Describe writes one service the way kubectl describe does: the summary, each cluster's part,
// the conflicts and every ServiceExport's conditions with their messages. Every long value wraps
// under its field, so that the description fits printers.Width.
func Describe(w io.Writer, l *MultiClusterServiceStatusList, it MultiClusterServiceStatus, o PrintOptions) error {
	var b bytes.Buffer
	field := func(name, value string) { printers.Field(&b, 0, describeAt, name, value) }
	field("Name", it.Name)
	field("Namespace", it.Namespace)
	status := string(it.Health)
	if o.Color && color(it.Health) != "" {
		status = color(it.Health) + status + colorReset
	}
	field("Status", status)
	field("Type", orNone(it.Type))
	field("Ports", list(PortsString(it.Ports)))
	field("Exported from", list(joinOr(it.ExportingClusters, "<none>")))
	if n := len(it.UnreadExporters); n > 0 {
		field("Not read", list(strings.Join(it.UnreadExporters, ","))+" ("+plural(n, "a source", "sources")+" named by the imports, outside --contexts)")
	}
	field("Imported in", list(joinOr(it.ImportingClusters, "<none>")))
	field("Endpoints", list(EndpointsString(it.Endpoints)))
	field("DNS name", orNone(it.DNSName))
	field("Age", Age(it.CreationTimestamp, o.Now))
	writeProblems(&b, it.Problems, describeAt)
	writeNotes(&b, it.Notes)

	b.WriteString("Clusters:\n")
	for _, c := range it.Clusters {
		describeCluster(&b, l, c)
	}

	if len(it.Conflicts) == 0 {
		field("Conflicts", "<none>")
	} else {
		b.WriteString("Conflicts:\n")
		var rows [][]string
		var notes []string
		for _, c := range it.Conflicts {
			rows = append(rows, []string{c.Reason, c.Winner, joinOr(c.Disagreeing, "<none>")})
			notes = append(notes, c.Message)
		}
		if err := printers.TableNotes(&b, 2, []string{"reason", "winner", "disagreeing"}, rows, notes); err != nil {
			return err
		}
	}

	var rows [][]string
	var notes []string
	for _, c := range it.Clusters {
		if c.Export == nil {
			continue
		}
		conds := append([]metav1.Condition(nil), c.Export.Conditions...)
		sort.SliceStable(conds, func(i, j int) bool { return condOrder(conds[i].Type) < condOrder(conds[j].Type) })
		if len(conds) == 0 {
			rows = append(rows, []string{c.Cluster, "<none>", "", "", ""})
			notes = append(notes, "no conditions: no MCS controller has looked at this export")
		}
		for _, cond := range conds {
			rows = append(rows, []string{c.Cluster, cond.Type, string(cond.Status), cond.Reason, Age(cond.LastTransitionTime, o.Now)})
			notes = append(notes, cond.Message)
		}
	}
	if len(rows) == 0 {
		b.WriteString("Export conditions: <none>\n")
	} else {
		b.WriteString("Export conditions:\n")
		if err := printers.TableNotes(&b, 2, []string{"cluster", "type", "status", "reason", "age"}, rows, notes); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// list spaces a comma-separated list so that it wraps between its items.
func list(s string) string { return strings.ReplaceAll(s, ",", ", ") }

// describeCluster writes one cluster's part of a service: a block of fields, as kubectl describe
// nests a section, rather than a table whose row would hold a whole connection error.
func describeCluster(b *bytes.Buffer, l *MultiClusterServiceStatusList, c ClusterStatus) {
	const indent, at = 4, 26
	field := func(name, value string) { printers.Field(b, indent, at, name, value) }
	fmt.Fprintf(b, "  %s:\n", c.Cluster)
	state := string(c.State)
	for _, ci := range l.Clusters {
		if ci.Name == c.Cluster && ci.Message != "" && c.State != snapshot.Reachable {
			state += ": " + ci.Message
		}
	}
	field("State", state)
	export, svc, ip, derived := "<none>", "<none>", "<none>", "<none>"
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
		svc += fmt.Sprintf(", %d/%d endpoints ready", e.Ready, e.Total)
	}
	imp := string(c.ImportState)
	if i := c.Import; i != nil {
		if !i.Managed {
			imp += " (unmanaged)"
		}
		ip = list(joinOr(i.IPs, "<none>"))
		if i.Type == "Headless" {
			ip = "None"
		}
		derived = orNone(i.DerivedService)
		if i.DerivedService != "" && !i.DerivedServiceExists {
			derived += " (missing)"
		}
	}
	copies := map[string]CopiesState{}
	for _, cp := range c.Copies {
		copies[cp.Source] = cp.State
	}
	var imported []string
	for _, e := range c.ImportedEndpoints {
		imported = append(imported, fmt.Sprintf("%s=%d/%d%s", e.Cluster, e.Ready, e.Total, copiesMark(copies[e.Cluster])))
	}
	for _, cp := range c.Copies { // stale for want of any copy at all
		if cp.State == CopiesStale && !slices.ContainsFunc(c.ImportedEndpoints, func(e SourceEndpoints) bool { return e.Cluster == cp.Source }) {
			imported = append(imported, cp.Source+"=0/0"+copiesMark(cp.State))
		}
	}
	field("Export", export)
	field("Service", svc)
	field("Import", orNone(imp))
	if i := c.Import; i != nil {
		if r := meta.FindStatusCondition(i.Conditions, "Ready"); r != nil {
			field("Import Ready", fmt.Sprintf("%s (%s): %s", r.Status, r.Reason, r.Message))
		}
	}
	field("Clusterset IP", ip)
	field("Derived Service", derived)
	field("Imported endpoints", list(joinOr(imported, "<none>")))
	field("ID from", idSource(l, c.Cluster))
}

// copiesMark marks imported endpoints whose copies are stale or were not compared.
func copiesMark(s CopiesState) string {
	switch s {
	case CopiesStale:
		return "(out of date)"
	case CopiesUnread:
		return "(source unread)"
	}
	return ""
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

// writeProblems writes the problems, each wrapped under its first line; at is the column the
// description's values start at.
func writeProblems(b *bytes.Buffer, problems []string, at int) {
	if len(problems) == 0 {
		printers.Field(b, 0, at, "Problems", "<none>")
		return
	}
	b.WriteString("Problems:\n")
	for _, p := range problems {
		fmt.Fprintf(b, "  %s\n", printers.Wrap(p, 2, 4, printers.Width))
	}
}

func describeConditions(w io.Writer, conds []metav1.Condition, now time.Time) error {
	if len(conds) == 0 {
		_, err := fmt.Fprintf(w, "%-21s<none>\n", "Conditions:")
		return err
	}
	fmt.Fprintln(w, "Conditions:")
	rows := make([][]string, 0, len(conds))
	notes := make([]string, 0, len(conds))
	for _, c := range conds {
		rows = append(rows, []string{c.Type, string(c.Status), c.Reason, Age(c.LastTransitionTime, now)})
		notes = append(notes, c.Message)
	}
	return printers.TableNotes(w, 2, []string{"type", "status", "reason", "age"}, rows, notes)
}
