package synccmd

// What sync --watch prints as it works: a line per object it wrote, a summary line when there
// are too many to read, the conflicts when they change, a line when a member turns unreachable
// and when it is back.

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

// linesPerSecond bounds the change lines of a watch: past it, a second's further objects are
// told in one summary line (a resync of thousands of services would scroll by unread).
const linesPerSecond = 20

// changeLog writes the changes of sync --watch: per sync of a service, one line per object, or
// per objects of a kind that became the same ("TIME CLUSTER KIND SERVICE OUTCOME":
// "07:00:00  member2  EndpointSlice(2)  demo/serve  created", 80 columns for a 20-character
// name; the objects' own names are in -o json and -o name), or with JSON one line per write for machines
// (every write, never summarised), or with -o name one "CLUSTER: RESOURCE/NAME" line per object
// (never summarised either; the conflicts as warnings on stderr, as kubectl get -w -o name prints
// names only).
type changeLog struct {
	mu     sync.Mutex
	out    io.Writer
	errOut io.Writer
	format string // "", json or name
	now    func() time.Time

	second time.Time         // the second the lines are counted in
	lines  int               // lines written in it
	held   []ChangeRow       // writes past linesPerSecond, told by flush
	down   map[string]string // the members told unreachable, and why
}

// changeLine is a JSON line: a write, the conflicts when they change, or a member's reachability
// when it changes.
type changeLine struct {
	Time string `json:"time"`
	*ChangeRow
	Conflicts *[]engine.Conflict `json:"conflicts,omitempty"`
	Member    *MemberEvent       `json:"member,omitempty"`
}

// MemberEvent is a member that turned unreachable (its objects are kept as last read, see
// --unreachable-timeout) or reachable again.
type MemberEvent struct {
	Cluster string         `json:"cluster"`
	State   snapshot.State `json:"state"`
	Message string         `json:"message,omitempty"`
}

const timeFormat = time.RFC3339

// lineTime is the time of a text line: a watch is read as it goes (its log lines and -o json
// carry the date).
const lineTime = time.TimeOnly

// outcomeRow is the objects of one cluster, kind and service that became the same (created,
// updated, deleted) in one sync.
type outcomeRow struct {
	outcome string
	objects []objectRow
}

func (r outcomeRow) kind() string {
	if len(r.objects) > 1 {
		return fmt.Sprintf("%s(%d)", r.objects[0].Kind, len(r.objects))
	}
	return r.objects[0].Kind
}

// byOutcome folds objects by cluster, kind, service and outcome, in the order of the first.
func byOutcome(rs []objectRow) []outcomeRow {
	var out []outcomeRow
	at := map[[4]string]int{}
	for _, r := range rs {
		k := [4]string{r.Cluster, r.Kind, r.Service, r.outcome()}
		if i, ok := at[k]; ok {
			out[i].objects = append(out[i].objects, r)
			continue
		}
		at[k] = len(out)
		out = append(out, outcomeRow{r.outcome(), []objectRow{r}})
	}
	return out
}

// changes is reconciler.Options.OnChanges.
func (l *changeLog) changes(cs []reconciler.Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	rows := toChanges(cs)
	switch l.format {
	case "json":
		for i := range rows {
			l.writeJSON(changeLine{Time: now.UTC().Format(timeFormat), ChangeRow: &rows[i]})
		}
		return
	case "name":
		_ = printNames(l.out, rows)
		return
	}
	if s := now.Truncate(time.Second); !s.Equal(l.second) {
		l.flushLocked()
		l.second, l.lines = s, 0
	}
	for _, r := range byOutcome(byObject(rows)) {
		if l.lines >= linesPerSecond {
			for _, o := range r.objects {
				for _, a := range o.Actions {
					l.held = append(l.held, ChangeRow{Cluster: o.Cluster, Kind: o.Kind, Object: o.Object, Action: a, Service: o.Service})
				}
			}
			continue
		}
		l.lines++
		l.row(now, r.objects[0].Cluster, r.kind(), r.objects[0].Service, r.outcome)
	}
}

// row writes one text line: TIME CLUSTER KIND SERVICE OUTCOME.
func (l *changeLog) row(now time.Time, cluster, kind, service, outcome string) {
	fmt.Fprintf(l.out, "%s  %-8s %-16s %-26s %s\n", now.Format(lineTime), cluster, kind, service, outcome)
}

// members tells each member that turned unreachable since the last call (unreachable: the
// members that are, and why) and each one that is back: a row of kind Cluster, a JSON line, or
// with -o name a line on stderr.
func (l *changeLog) members(unreachable map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down == nil {
		l.down = map[string]string{}
	}
	ids := make([]string, 0, len(unreachable)+len(l.down))
	for id := range unreachable {
		if _, told := l.down[id]; !told {
			ids = append(ids, id)
		}
	}
	for id := range l.down {
		if _, still := unreachable[id]; !still {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	now := l.now()
	for _, id := range ids {
		why, down := unreachable[id]
		e := MemberEvent{Cluster: id, State: snapshot.Reachable}
		if down {
			e.State, e.Message = snapshot.Unreachable, why
			l.down[id] = why
		} else {
			delete(l.down, id)
		}
		switch l.format {
		case "json":
			l.writeJSON(changeLine{Time: now.UTC().Format(timeFormat), Member: &e})
		case "name":
			if down {
				fmt.Fprintf(l.errOut, "Warning: cluster %q is unreachable: %s\n", id, why)
			} else {
				fmt.Fprintf(l.errOut, "Cluster %q is reachable again\n", id)
			}
		default:
			l.row(now, id, "Cluster", "-", strings.ToLower(string(e.State)))
		}
	}
}

// flush tells the writes held back, in one line; called every second.
func (l *changeLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.now().Truncate(time.Second).After(l.second) {
		l.flushLocked()
	}
}

func (l *changeLog) flushLocked() {
	if len(l.held) == 0 {
		return
	}
	s := summarize(l.held, 0)
	line := strings.TrimSuffix(s.Line(), "; 0 conflicts.")
	text := fmt.Sprintf("and %d more objects: %s", len(byObject(l.held)), line)
	fmt.Fprintf(l.out, "%s  %s\n", l.now().Format(lineTime), printers.Wrap(text, len(lineTime)+2, len(lineTime)+2, printers.Width))
	l.held = nil
}

// conflicts writes the conflicts, which changed: a table, or a JSON line.
func (l *changeLog) conflicts(cs []engine.Conflict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().UTC().Format(timeFormat)
	if cs == nil {
		cs = []engine.Conflict{}
	}
	switch l.format {
	case "json":
		l.writeJSON(changeLine{Time: now, Conflicts: &cs})
		return
	case "name":
		warnConflicts(l.errOut, cs)
		return
	}
	fmt.Fprintf(l.out, "--- conflicts at %s\n", now)
	_ = PrintConflicts(l.out, cs)
}

func (l *changeLog) writeJSON(v changeLine) {
	b, err := json.Marshal(v)
	if err == nil {
		_, _ = l.out.Write(append(b, '\n'))
	}
}
