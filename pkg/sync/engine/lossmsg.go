package engine

// The part of a conflict message that names what lost, and the bound on its length.

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxConflictMessage bounds one conflict's message: an export's Conflict condition joins the
// messages of every reason (nine at most) and the apiserver refuses a condition message over
// 32768 bytes.
const maxConflictMessage = 3600

// groupLosses renders the losing exports' values, each with the clusters holding it, values
// sorted: ` Not using "Headless" from "member2", "member3"; "X" from "member4".` "" when no
// export has a value.
func groupLosses(lead string, losing []LosingExport, value func(LosingExport) string, verb string) string {
	by := map[string][]string{}
	for _, l := range losing {
		if v := value(l); v != "" {
			by[v] = append(by[v], l.Cluster)
		}
	}
	if len(by) == 0 {
		return ""
	}
	values := make([]string, 0, len(by))
	for v := range by {
		values = append(values, v)
	}
	sort.Strings(values)
	parts := make([]string, len(values))
	for i, v := range values {
		clusters := by[v]
		sort.Strings(clusters)
		parts[i] = fmt.Sprintf("%q %s %s", v, verb, quoteJoin(clusters))
	}
	return lead + strings.Join(parts, "; ") + "."
}

// fitMessage joins head, middle and tail, cutting what does not fit in maxConflictMessage out of
// head and middle (at a character boundary, marked), so the tail's counts always stay.
func fitMessage(head, middle, tail string) string {
	s := head + middle
	if len(s)+len(tail) <= maxConflictMessage {
		return s + tail
	}
	const cut = " [...]."
	n := maxConflictMessage - len(tail) - len(cut)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + cut + tail
}
