package diagnose

// checkSync: the syncs running in the clusterset, by their Leases (status.Syncs). An installed
// one (its Lease in kubectl-mcs-system) is told running or stopped; one run by hand with
// --leader-elect only while it runs. A stopped sync and what a running one cannot do warn: a
// stopped sync breaks nothing until something changes, and then the import checks fail on what it
// left stale. None running is said; it warns when copies are stale (noSyncWarns), since a one-shot
// sync from a laptop, which no Lease shows, leaves a healthy clusterset too.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

const syncApp = "kubectl-mcs-sync" // the installed sync's Deployment and app label

func checkSync(s *Snapshot) []Result {
	clusters := make([]snapshot.Cluster, len(s.Clusters))
	for i := range s.Clusters {
		clusters[i] = s.Clusters[i].Cluster
	}
	syncs := slices.DeleteFunc(status.Syncs(clusters, s.Now), func(y status.SyncStatus) bool {
		return y.Stale && y.Namespace != names.SystemNamespace
	})
	if len(syncs) == 0 {
		return []Result{{Check: CheckSync, Severity: OK,
			Message: "no sync runs in the clusterset: none is installed (" + names.SystemNamespace + ") and none runs with --leader-elect; the imports change only when a sync runs"}}
	}
	var out []Result
	perMember := map[string]bool{} // members whose own sync runs, when syncs run per member
	for _, y := range syncs {
		r := Result{Check: CheckSync, Cluster: y.Cluster, Object: "lease/" + y.Namespace + "/" + syncApp}
		ago := s.Now.Sub(y.Renewed.Time).Round(time.Second)
		if y.Stale {
			r.Severity = Warn
			r.Message = fmt.Sprintf("not running: its Lease was last renewed %s ago; the imports it keeps do not change", ago)
			if y.Leader == "" {
				r.Message = fmt.Sprintf("not running: it released its Lease %s ago; the imports it kept do not change", ago)
			}
			r.Fix, r.Commands = fixStopped(s, y)
			out = append(out, r)
			continue
		}
		scope := "the clusterset"
		if y.Local != "" {
			scope, perMember[y.Local] = fmt.Sprintf("%q alone", y.Local), true
		}
		r.Severity, r.Message = OK, fmt.Sprintf("running: %s leads, renewed %s ago, for %s", y.Leader, ago, scope)
		out = append(out, r)
		for _, m := range y.Unreachable {
			out = append(out, Result{Check: CheckSync, Cluster: y.Cluster, Object: r.Object, Severity: Warn,
				Message:  fmt.Sprintf("cannot read cluster %q (%s): %s; what it exported stays imported", m.Cluster, strings.ToLower(string(m.State)), m.Message),
				Fix:      fmt.Sprintf("Check that the sync pods in %q reach the apiserver of %q at the address their kubeconfig gives (kubectl mcs install --member-server), and its logs:", y.Cluster, m.Cluster),
				Commands: []shell.Command{logsCommand(s, y)}})
		}
		if y.FailingWrites > 0 {
			out = append(out, Result{Check: CheckSync, Cluster: y.Cluster, Object: r.Object, Severity: Warn,
				Message: fmt.Sprintf("%d writes keep failing: %s", y.FailingWrites, strings.Join(y.Failing, "; ")),
				Fix:     "Read the apiservers' answers in its logs:", Commands: []shell.Command{logsCommand(s, y)}})
		}
	}
	if len(perMember) > 0 {
		for _, m := range s.Clusters {
			if m.State == snapshot.Reachable && !perMember[m.ID] {
				out = append(out, Result{Check: CheckSync, Cluster: m.ID, Severity: Warn,
					Message: "runs no sync of its own while the other members' syncs act each for their own: its imports do not change",
					Fix:     "Install it there too (kubectl mcs install --mode=per-member over the whole clusterset)."})
			}
		}
	}
	return out
}

// noSyncWarns makes "no sync runs" a warning when the imports checks found copies out of date.
func noSyncWarns(results []Result) {
	stale := slices.ContainsFunc(results, func(x Result) bool { return x.Check == CheckFreshness && x.Severity == Fail })
	for i := range results {
		if x := &results[i]; stale && x.Check == CheckSync && x.Cluster == "" && x.Severity == OK {
			x.Severity, x.sync = Warn, syncController
			x.Fix = "Install sync in the clusters (kubectl mcs install, see docs/running-in-a-cluster.md), or run it:"
		}
	}
}

// withInstalledSync makes a fix that runs sync once fit an installed sync that acts for x's member
// and runs: it should have done what the one-shot would, and its logs say why not.
func withInstalledSync(s *Snapshot, syncs []status.SyncStatus, x *Result) {
	if x.sync == nil || x.sync.watch {
		return
	}
	for _, y := range syncs {
		if y.Namespace == names.SystemNamespace && !y.Stale && (y.Local == "" || y.Local == x.Cluster) {
			x.Fix = strings.TrimSuffix(x.Fix, ":") + fmt.Sprintf(". The sync installed in %q runs and should have done so; its logs say why it has not:", y.Cluster)
			x.Commands = append(x.Commands, logsCommand(s, y))
			return
		}
	}
}

// fixStopped: an installed sync's Deployment and logs; a sync run by hand is run again.
func fixStopped(s *Snapshot, y status.SyncStatus) (string, []shell.Command) {
	if y.Namespace != names.SystemNamespace {
		return "Run it again, or install it in the clusters (kubectl mcs install):", []shell.Command{syncCommand(s, *syncController)}
	}
	return "Check its Deployment and its pods' logs:", []shell.Command{
		shell.Kubectl("--context", contextOf(s, y.Cluster), "-n", y.Namespace, "get", "deployment", syncApp),
		logsCommand(s, y)}
}

func logsCommand(s *Snapshot, y status.SyncStatus) shell.Command {
	return shell.Kubectl("--context", contextOf(s, y.Cluster), "-n", y.Namespace, "logs", "-l", "app.kubernetes.io/name="+syncApp, "--tail=50", "--prefix")
}

// contextOf is the context of member id.
func contextOf(s *Snapshot, id string) string {
	for _, m := range s.Clusters {
		if m.ID == id {
			return m.Context
		}
	}
	return id
}
