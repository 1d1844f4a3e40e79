package synccmd

import (
	"fmt"
	"io"
	"sort"
	"strings"

	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

// Report is the machine-readable result of one pass (-o yaml|json).
type Report struct {
	// Changes has one row per write, as made.
	Changes     []ChangeRow       `json:"changes"`
	Conflicts   []engine.Conflict `json:"conflicts"`
	Unreachable map[string]string `json:"unreachable,omitempty"`
	Skipped     []string          `json:"skipped,omitempty"`
	Summary     Summary           `json:"summary"`
}

// ChangeRow is one write.
type ChangeRow struct {
	Cluster string `json:"cluster"`
	Kind    string `json:"kind"`
	Object  string `json:"object"`
	Action  string `json:"action"`
	// Service is the multi-cluster service (NAMESPACE/NAME) the object belongs to: what the
	// text tells the object by, as a derived object's name is too long for a line.
	Service string `json:"-"`
}

// Summary counts the objects of a pass by what became of them, per kind, and the conflicts.
type Summary struct {
	Created   map[string]int `json:"created"`
	Updated   map[string]int `json:"updated"`
	Deleted   map[string]int `json:"deleted"`
	Conflicts int            `json:"conflicts"`
	// kinds is the order the kinds were first met in, for the line.
	kinds []string
}

// objectRow is one object's writes, joined in the order made: "create,status,update".
type objectRow struct {
	Cluster, Kind, Object, Service string
	Actions                        []string
}

// toChanges lists the writes cluster by cluster, each cluster's in the order they were made (the
// clusters are written concurrently, so their interleaving says nothing).
func toChanges(cs []reconciler.Change) []ChangeRow {
	out := []ChangeRow{}
	for _, c := range cs {
		svc := c.Namespace + "/" + c.Service
		if c.Service == "" {
			svc = c.Namespace + "/" + c.Name
		}
		out = append(out, ChangeRow{Cluster: c.Cluster, Kind: c.Kind, Object: c.Namespace + "/" + c.Name, Action: c.Action, Service: svc})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// byObject folds the writes into one row per object, in the order of their first write.
func byObject(cs []ChangeRow) []objectRow {
	var out []objectRow
	at := map[[3]string]int{}
	for _, c := range cs {
		k := [3]string{c.Cluster, c.Kind, c.Object}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			svc := c.Service
			if svc == "" {
				svc = c.Object
			}
			out = append(out, objectRow{Cluster: c.Cluster, Kind: c.Kind, Object: c.Object, Service: svc})
		}
		out[i].Actions = append(out[i].Actions, c.Action)
	}
	return out
}

// outcome is what became of an object: created (whatever followed the create), deleted, or
// updated (a status or an update, or replaced: deleted, then created again).
func (r objectRow) outcome() string {
	var created, deleted bool
	for _, a := range r.Actions {
		created = created || a == engine.VerbCreate
		deleted = deleted || a == engine.VerbDelete
	}
	switch {
	case created && !deleted:
		return "created"
	case deleted && !created:
		return "deleted"
	}
	return "updated"
}

// summarize counts the objects of the changes by outcome and kind.
func summarize(cs []ChangeRow, conflicts int) Summary {
	s := Summary{Created: map[string]int{}, Updated: map[string]int{}, Deleted: map[string]int{}, Conflicts: conflicts}
	for _, r := range byObject(cs) {
		if s.Created[r.Kind]+s.Updated[r.Kind]+s.Deleted[r.Kind] == 0 {
			s.kinds = append(s.kinds, r.Kind)
		}
		map[string]map[string]int{"created": s.Created, "updated": s.Updated, "deleted": s.Deleted}[r.outcome()][r.Kind]++
	}
	return s
}

// Line is the summary in one line: "3 created (ServiceImport 1, Service 1, EndpointSlice 1),
// 1 updated (ServiceExport 1), 0 deleted; 0 conflicts."
func (s Summary) Line() string {
	part := func(what string, m map[string]int) string {
		n := 0
		var kinds []string
		for _, k := range s.kinds {
			if m[k] > 0 {
				n += m[k]
				kinds = append(kinds, fmt.Sprintf("%s %d", k, m[k]))
			}
		}
		if n == 0 {
			return "0 " + what
		}
		return fmt.Sprintf("%d %s (%s)", n, what, strings.Join(kinds, ", "))
	}
	return fmt.Sprintf("%s, %s, %s; %d conflicts.", part("created", s.Created), part("updated", s.Updated), part("deleted", s.Deleted), s.Conflicts)
}

// printReport prints a pass's report: a row per object with its writes joined (objects of one
// kind, service and writes in one row, counted: "EndpointSlice(2)"), the conflicts, and the
// summary line, wrapped. failed: the pass ended in an error, which the caller prints after it, so
// "No changes." would be untrue (the changes it wanted were not made).
func (o *Options) printReport(rep Report, failed bool) error {
	suffix := ""
	if o.Write.DryRun != cmdutil.DryRunNone {
		suffix = " (dry run)"
	}
	switch {
	case len(rep.Changes) == 0 && failed:
	case len(rep.Changes) == 0:
		fmt.Fprintln(o.Out, "No changes."+suffix)
		fmt.Fprintln(o.Out)
	default:
		var rows [][]string
		for _, r := range byService(byObject(rep.Changes)) {
			rows = append(rows, []string{r.Cluster, r.kind(), r.Service, strings.Join(r.Actions, ",")})
		}
		// Said once in the header, not in every row: a row keeps to the width rule.
		if err := printers.Table(o.Out, []string{"cluster", "kind", "service", "action" + suffix}, rows, false); err != nil {
			return err
		}
		fmt.Fprintln(o.Out)
	}
	if err := PrintConflicts(o.Out, rep.Conflicts); err != nil {
		return err
	}
	if len(rep.Changes) > 0 {
		fmt.Fprintln(o.Out)
		fmt.Fprintln(o.Out, printers.Wrap(strings.TrimSuffix(rep.Summary.Line(), ".")+suffix+".", 0, 0, printers.Width))
	}
	o.warn(rep)
	return nil
}

// warn writes, on stderr, what the pass left alone and the clusters it could not read.
func (o *Options) warn(rep Report) {
	for _, s := range rep.Skipped {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", s)
	}
	ids := make([]string, 0, len(rep.Unreachable))
	for id := range rep.Unreachable {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q not read: %s; what it exported stays imported\n", id, rep.Unreachable[id])
	}
}

// PrintConflicts writes the conflicts table (or a line saying there are none), each conflict's
// detail wrapped under its row.
func PrintConflicts(w io.Writer, cs []engine.Conflict) error {
	if len(cs) == 0 {
		_, err := fmt.Fprintln(w, "No conflicts.")
		return err
	}
	rows := make([][]string, 0, len(cs))
	details := make([]string, 0, len(cs))
	for _, c := range cs {
		rows = append(rows, []string{c.Namespace, c.Service, c.Reason, c.Winner, strings.Join(c.Disagreeing, ",")})
		details = append(details, c.Message)
	}
	return printers.TableNotes(w, 0, []string{"namespace", "service", "conflict", "winner", "disagreeing"}, rows, details)
}

// serviceRow is the objects of one kind and service that one cluster had the same writes made
// to: a service's EndpointSlices (one per source slice) in one row.
type serviceRow struct {
	objectRow
	n int
}

func (r serviceRow) kind() string {
	if r.n > 1 {
		return fmt.Sprintf("%s(%d)", r.Kind, r.n)
	}
	return r.Kind
}

// byService folds the objects of one cluster, kind and service with the same writes into one
// row, in the order of the first.
func byService(rs []objectRow) []serviceRow {
	var out []serviceRow
	at := map[[4]string]int{}
	for _, r := range rs {
		k := [4]string{r.Cluster, r.Kind, r.Service, strings.Join(r.Actions, ",")}
		if i, ok := at[k]; ok {
			out[i].n++
			continue
		}
		at[k] = len(out)
		out = append(out, serviceRow{r, 1})
	}
	return out
}
