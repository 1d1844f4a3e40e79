package rbac

import (
	"os"
	"strings"
	"testing"
)

// readmeRow is how the permissions table of docs/running-in-a-cluster.md shows a rule.
func readmeRow(r Rule) string {
	group := r.Group
	if group == "" {
		group = "core"
	}
	res := "`" + r.Resource + "`"
	if len(r.ResourceNames) > 0 {
		res += " named `" + strings.Join(r.ResourceNames, "`, `") + "`"
	}
	where := "every member (ClusterRole)"
	if r.Scope == LeaseNamespace {
		where = "the Lease member, Lease namespace (Role)"
	}
	return "| `" + group + "` | " + res + " | " + strings.Join(r.Verbs, ", ") + " | " + where + " | " + r.Why + " |"
}

// TestReadmeTable: the permissions table of docs/running-in-a-cluster.md is SyncRules, row for
// row. README_RULES=1
// prints the rows to paste.
func TestReadmeTable(t *testing.T) {
	var rows []string
	for _, r := range SyncRules {
		rows = append(rows, readmeRow(r))
	}
	want := strings.Join(rows, "\n") + "\n"
	if os.Getenv("README_RULES") != "" {
		t.Log("\n" + want)
	}
	b, err := os.ReadFile("../../docs/running-in-a-cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	head := "| API group | resource | verbs | where | why |\n|---|---|---|---|---|\n"
	if !strings.Contains(string(b), head+want) {
		t.Errorf("the permissions table of docs/running-in-a-cluster.md is not pkg/rbac.SyncRules; want:\n%s%s", head, want)
	}
	rows = nil
	for _, r := range ReaderRules() {
		rows = append(rows, readerRow(r))
	}
	want = strings.Join(rows, "\n") + "\n"
	if os.Getenv("README_RULES") != "" {
		t.Log("\n" + want)
	}
	head = "| API group | resource | verbs |\n|---|---|---|\n"
	if !strings.Contains(string(b), head+want) {
		t.Errorf("the reader table of docs/running-in-a-cluster.md is not pkg/rbac.ReaderRules; want:\n%s%s", head, want)
	}
}

// readerRow is how the reader table shows a rule: group, resource and verbs (every reader rule is
// cluster-wide, and SyncRules' why is about sync's writes too).
func readerRow(r Rule) string {
	cells := strings.Split(readmeRow(r), " | ")
	return strings.Join(cells[:3], " | ") + " |"
}
