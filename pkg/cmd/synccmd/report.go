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
	Changes     []ChangeRow       `json:"changes"`
	Conflicts   []engine.Conflict `json:"conflicts"`
	Unreachable map[string]string `json:"unreachable,omitempty"`
	Skipped     []string          `json:"skipped,omitempty"`
}

// ChangeRow is one write.
type ChangeRow struct {
	Cluster string `json:"cluster"`
	Kind    string `json:"kind"`
	Object  string `json:"object"`
	Action  string `json:"action"`
}

// toChanges lists the writes cluster by cluster, each cluster's in the order they were made (the
// clusters are written concurrently, so their interleaving says nothing).
func toChanges(cs []reconciler.Change) []ChangeRow {
	out := []ChangeRow{}
	for _, c := range cs {
		out = append(out, ChangeRow{Cluster: c.Cluster, Kind: c.Kind, Object: c.Namespace + "/" + c.Name, Action: c.Action})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// printReport prints a pass's report; failed: the pass ended in an error, which the caller
// prints after it, so "No changes." would be untrue (the changes it wanted were not made).
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
		rows := make([][]string, 0, len(rep.Changes))
		for _, c := range rep.Changes {
			rows = append(rows, []string{c.Cluster, c.Kind, c.Object, c.Action + suffix})
		}
		if err := printers.Table(o.Out, []string{"cluster", "kind", "object", "action"}, rows, false); err != nil {
			return err
		}
		fmt.Fprintln(o.Out)
	}
	if err := PrintConflicts(o.Out, rep.Conflicts); err != nil {
		return err
	}
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
	return nil
}

// PrintConflicts writes the conflicts table (or a line saying there are none).
func PrintConflicts(w io.Writer, cs []engine.Conflict) error {
	if len(cs) == 0 {
		_, err := fmt.Fprintln(w, "No conflicts.")
		return err
	}
	rows := make([][]string, 0, len(cs))
	for _, c := range cs {
		rows = append(rows, []string{c.Namespace, c.Service, c.Reason, c.Winner, strings.Join(c.Disagreeing, ","), c.Message})
	}
	return printers.Table(w, []string{"namespace", "service", "conflict", "winner", "disagreeing", "detail"}, rows, false)
}
