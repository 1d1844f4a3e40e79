package synccmd

// What sync --watch prints as it works: a line per object it wrote, a summary line when there
// are too many to read, the conflicts when they change.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

// linesPerSecond bounds the change lines of a watch: past it, a second's further objects are
// told in one summary line (a resync of thousands of services would scroll by unread).
const linesPerSecond = 20

// changeLog writes the changes of sync --watch: per sync of a service, one line per object
// ("TIME CLUSTER KIND NAMESPACE/NAME ACTIONS"), or with JSON one line per write for machines
// (every write, never summarised), or with -o name one "CLUSTER: RESOURCE/NAME" line per object
// (never summarised either; the conflicts as warnings on stderr, as kubectl get -w -o name prints
// names only).
type changeLog struct {
	mu     sync.Mutex
	out    io.Writer
	errOut io.Writer
	format string // "", json or name
	now    func() time.Time

	second time.Time   // the second the lines are counted in
	lines  int         // lines written in it
	held   []ChangeRow // writes past linesPerSecond, told by flush
}

// changeLine is a JSON line: a write, or the conflicts when they change.
type changeLine struct {
	Time string `json:"time"`
	*ChangeRow
	Conflicts *[]engine.Conflict `json:"conflicts,omitempty"`
}

const timeFormat = time.RFC3339

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
	for _, r := range byObject(rows) {
		if l.lines >= linesPerSecond {
			for _, a := range r.Actions {
				l.held = append(l.held, ChangeRow{Cluster: r.Cluster, Kind: r.Kind, Object: r.Object, Action: a})
			}
			continue
		}
		l.lines++
		fmt.Fprintf(l.out, "%s  %-10s %-19s %-40s %s\n", now.UTC().Format(timeFormat), r.Cluster, r.Kind, r.Object, strings.Join(r.Actions, ","))
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
	fmt.Fprintf(l.out, "%s  and %d more objects: %s\n", l.now().UTC().Format(timeFormat), len(byObject(l.held)), line)
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
