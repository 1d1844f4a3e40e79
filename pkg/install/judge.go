package install

// What install --wait decides from what it read, pure: one installed sync (a Deployment and the
// Lease its leader renews) rolled out, led by a pod of its new ReplicaSet, and reading every
// member, or why not yet.

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// Site is one installed sync as install waits for it.
type Site struct {
	// Cluster runs its Deployment; Lease is the member holding its Lease.
	Cluster, Lease string
	// Members are the members it reads, in order; Addresses the API server address its pods use
	// for each, by ID (what its kubeconfig Secret says).
	Members   []string
	Addresses map[string]string
}

// Rollout is its Deployment as `kubectl rollout status` judges it.
type Rollout struct {
	Done bool
	// Message is the rollout's progress when not Done (kubectl's words).
	Message string
	// ReplicaSet is the Deployment's new ReplicaSet ("" when not known yet): its pods lead.
	ReplicaSet string
}

// RolloutStatus judges d as `kubectl rollout status` does (k8s.io/kubectl's
// DeploymentStatusViewer, in its words, whose package brings dependencies of its own): the
// controller observed the spec, every replica updated, no old one left, every updated one
// available. A Deployment past its progress deadline is an error.
func RolloutStatus(d *appsv1.Deployment) (Rollout, error) {
	if d.Generation > d.Status.ObservedGeneration {
		return Rollout{Message: "Waiting for deployment spec update to be observed..."}, nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Rollout{}, errPastDeadline{fmt.Errorf("deployment %q exceeded its progress deadline: %s", d.Name, c.Message)}
		}
	}
	st := d.Status
	switch {
	case d.Spec.Replicas != nil && st.UpdatedReplicas < *d.Spec.Replicas:
		return Rollout{Message: fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", d.Name, st.UpdatedReplicas, *d.Spec.Replicas)}, nil
	case st.Replicas > st.UpdatedReplicas:
		return Rollout{Message: fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", d.Name, st.Replicas-st.UpdatedReplicas)}, nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return Rollout{Message: fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", d.Name, st.AvailableReplicas, st.UpdatedReplicas)}, nil
	}
	return Rollout{Done: true, Message: fmt.Sprintf("deployment %q successfully rolled out", d.Name)}, nil
}

// errPastDeadline: a rollout that will not finish, which no waiting changes.
type errPastDeadline struct{ error }

// Verdict is where one sync stands.
type Verdict struct {
	Done bool
	// Waiting says, in one line, what is not there yet (when not Done).
	Waiting string
	// Unreachable are, when the leader's view says so, one line per member its pods do not read:
	// the member, the address they use and the error they report. At the timeout they fail
	// the command.
	Unreachable []string
}

// rolledOut heads what is awaited once the Deployment rolled out.
const rolledOut = "rolled out; "

// Judge is where site stands, its rollout and its Lease (nil: none) read at now. A leader of the
// new ReplicaSet may report before the rollout ends (a leader whose caches have not synced is
// not ready, for up to sync's --cache-sync-timeout): the members it cannot read are told then too.
func Judge(site Site, r Rollout, lease *snapshot.Sync, now time.Time) Verdict {
	waiting, unreachable := leaderView(site, r, lease, now)
	switch {
	case !r.Done && len(unreachable) > 0:
		return Verdict{Waiting: strings.TrimSpace(r.Message) + "; " + waiting, Unreachable: unreachable}
	case !r.Done:
		return Verdict{Waiting: strings.TrimSpace(r.Message)}
	case waiting == "":
		return Verdict{Done: true}
	}
	return Verdict{Waiting: rolledOut + waiting, Unreachable: unreachable}
}

// leaderView is what the Lease tells of the new pods' leader: what is awaited ("" when it reads
// every member), and a line per member it reports not reading.
func leaderView(site Site, r Rollout, lease *snapshot.Sync, now time.Time) (string, []string) {
	switch {
	case r.ReplicaSet == "":
		return fmt.Sprintf("the new replicaset of deployment %q not found yet", Name), nil
	case lease == nil:
		return fmt.Sprintf("no leader: no Lease %s/%s in cluster %q yet", DefaultNamespace, Name, site.Lease), nil
	case lease.Holder == "":
		return fmt.Sprintf("no leader: nobody holds the Lease in cluster %q", site.Lease), nil
	}
	pod, _, _ := strings.Cut(lease.Holder, "_")
	switch {
	case !strings.HasPrefix(pod, r.ReplicaSet+"-"):
		return fmt.Sprintf("no pod of replicaset %q leads yet (the Lease in cluster %q is held by %s)", r.ReplicaSet, site.Lease, pod), nil
	case lease.Stale(now):
		return fmt.Sprintf("the leader %s has not renewed its Lease since %s", pod, lease.Renewed.Format(time.RFC3339)), nil
	case lease.View == nil:
		return fmt.Sprintf("the leader %s has not reported what it reads yet", pod), nil
	}
	seen := map[string]snapshot.SyncViewedMember{}
	for _, m := range lease.View.Members {
		seen[m.Cluster] = m
	}
	var waiting, unreachable []string
	for _, id := range site.Members {
		m, ok := seen[id]
		switch {
		case !ok:
			waiting = append(waiting, id+" (not reported)")
		case m.State != snapshot.Reachable:
			waiting = append(waiting, fmt.Sprintf("%s (%s)", id, strings.ToLower(string(m.State))))
			unreachable = append(unreachable, fmt.Sprintf("cluster %q: the sync pods in %q cannot read it at %s: %s",
				id, site.Cluster, site.Addresses[id], orUnknown(m.Message)))
		}
	}
	if len(waiting) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the leader %s does not read %d of %d members: %s", pod, len(waiting), len(site.Members), strings.Join(waiting, ", ")), unreachable
}

func orUnknown(msg string) string {
	if msg == "" {
		return "no error reported yet"
	}
	return msg
}

// TimedOut is the error of a wait that ran out: the members the pods cannot read when a
// leader reported them, else what was still missing, one line per sync.
func TimedOut(timeout time.Duration, sites []Site, verdicts []Verdict) error {
	var unreachable, missing []string
	for i, v := range verdicts {
		switch {
		case v.Done:
		case len(v.Unreachable) > 0:
			unreachable = append(unreachable, v.Unreachable...)
		default:
			missing = append(missing, fmt.Sprintf("sync in %q: %s", sites[i].Cluster, v.Waiting))
		}
	}
	lines := append(unreachable, missing...)
	head := fmt.Sprintf("timed out after %s waiting for the sync", timeout)
	if len(unreachable) > 0 {
		head = fmt.Sprintf("%s: %d member(s) not reachable from its pods (fix the address with --member-server=CTX=URL and run install again)", head, len(unreachable))
	}
	return fmt.Errorf("%s:\n  %s", head, strings.Join(lines, "\n  "))
}
