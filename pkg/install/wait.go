package install

// install --wait: after the writes, the Deployment(s) rolled out as `kubectl rollout status`
// judges them, and the leader of the new pods reporting on its Lease (snapshot.SyncView, read
// by member.ReadSyncs as status and diagnose read it) that it reads every member. Judge decides.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// DefaultWaitTimeout is --timeout's default: a rollout of two replicas and a leader's first
// rounds take seconds; a pull of the image over a slow link takes minutes.
const DefaultWaitTimeout = 5 * time.Minute

// waitInterval is how often the Deployments and Leases are read: the leader renews every 2s.
const waitInterval = 2 * time.Second

var replicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}

// revisionAnnotation is the Deployment controller's revision, on a Deployment and its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// waited is one sync install waits for: what Judge takes, and the clients that read it.
type waited struct {
	site    Site
	dyn     dynamic.Interface // the cluster running the Deployment
	lease   func(context.Context) *snapshot.Sync
	verdict Verdict
	said    string // the last progress line printed
}

// Wait waits, up to timeout, for every sync Install wrote to roll out and for its leader to
// report every member read. Progress goes to ErrOut, a line each time a sync's state changes.
// A member the leader still does not read at the timeout fails it, named with the address the
// pods use and the leader's error; anything else still missing is said as it stands.
func (o *Options) Wait(ctx context.Context, timeout time.Duration) error {
	ws, err := o.waited()
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, waitInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done := true
		for _, w := range ws {
			if w.verdict.Done {
				continue
			}
			r, err := readRollout(ctx, w.dyn)
			var lease *snapshot.Sync
			if err == nil && r.ReplicaSet != "" {
				lease = w.lease(ctx)
			}
			if ctx.Err() != nil {
				return false, ctx.Err() // out of time: the verdicts stand as last read
			}
			var past errPastDeadline
			switch {
			case errors.As(err, &past):
				return false, fmt.Errorf("sync in %q: %w", w.site.Cluster, err)
			case err != nil && w.said == "":
				w.verdict = Verdict{Waiting: err.Error()}
			case err != nil:
				// A read that fails (an apiserver that does not answer for a moment, a client
				// rate limiter near the deadline) says nothing of the sync: the last verdict stands.
			default:
				w.verdict = Judge(w.site, r, lease, time.Now())
			}
			o.progress(w)
			done = done && w.verdict.Done
		}
		return done, nil
	})
	if err == nil || !wait.Interrupted(err) || ctx.Err() != nil {
		return err
	}
	sites, verdicts := make([]Site, len(ws)), make([]Verdict, len(ws))
	for i, w := range ws {
		sites[i], verdicts[i] = w.site, w.verdict
	}
	return TimedOut(timeout, sites, verdicts)
}

// progress prints what changed of w, as kubectl rollout status does.
func (o *Options) progress(w *waited) {
	line := w.verdict.Waiting
	if w.verdict.Done {
		line = fmt.Sprintf("rolled out; its leader reads all %d members", len(w.site.Members))
	}
	if line == w.said {
		return
	}
	w.said = line
	fmt.Fprintf(o.ErrOut, "sync in %q: %s\n", w.site.Cluster, line)
}

// waited are the syncs Install wrote: the host's, or every member's.
func (o *Options) waited() ([]*waited, error) {
	var out []*waited
	for _, c := range o.configs() {
		dyn, err := o.clientOf(c)
		if err != nil {
			return nil, err
		}
		lm := o.member(c.LeaseMember())
		if lm == nil {
			return nil, fmt.Errorf("the Lease cluster %q is not one of --contexts", c.LeaseMember())
		}
		site := Site{Cluster: o.siteID(c), Lease: lm.ID, Addresses: map[string]string{}}
		for _, m := range c.Members {
			site.Members = append(site.Members, m.ID)
			site.Addresses[m.ID] = o.addressOf(c.Local, m.ID)
		}
		ns := c.Namespace
		out = append(out, &waited{site: site, dyn: dyn, lease: func(ctx context.Context) *snapshot.Sync {
			if lm.Err != nil {
				return nil
			}
			for _, s := range member.ReadSyncs(ctx, lm) {
				if s.Namespace == ns {
					return &s
				}
			}
			return nil
		}})
	}
	return out, nil
}

// addressOf is the API server address the pods of the sync acting for local ("": the host's)
// use for member id: their own apiserver's in-cluster address, --member-server's, or the
// kubeconfig's server.
func (o *Options) addressOf(local, id string) string {
	if id == local {
		return InClusterServer
	}
	if a := o.servers[id]; a != "" {
		return a
	}
	for _, s := range o.serversOf() {
		if s.ID == id {
			return s.Server
		}
	}
	return ""
}

// readRollout reads the Deployment, judged as `kubectl rollout status` judges it, and its new
// ReplicaSet.
func readRollout(ctx context.Context, dyn dynamic.Interface) (Rollout, error) {
	u, err := dyn.Resource(resources["Deployment"]).Namespace(DefaultNamespace).Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		return Rollout{}, fmt.Errorf("deployment %s/%s: %w", DefaultNamespace, Name, err)
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
		return Rollout{}, fmt.Errorf("deployment %s/%s: %w", DefaultNamespace, Name, err)
	}
	r, err := RolloutStatus(&d)
	if err != nil || d.Generation > d.Status.ObservedGeneration {
		return r, err // the revision is the old one's until the controller observed the spec
	}
	r.ReplicaSet, err = newReplicaSet(ctx, dyn, u)
	return r, err
}

// newReplicaSet is the name of d's ReplicaSet of d's revision ("" when none is yet).
func newReplicaSet(ctx context.Context, dyn dynamic.Interface, d *unstructured.Unstructured) (string, error) {
	rev := d.GetAnnotations()[revisionAnnotation]
	if rev == "" {
		return "", nil
	}
	if _, err := strconv.ParseInt(rev, 10, 64); err != nil {
		return "", fmt.Errorf("deployment %s/%s: annotation %s=%q: %w", DefaultNamespace, Name, revisionAnnotation, rev, err)
	}
	l, err := dyn.Resource(replicaSets).Namespace(DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: appLabel + "=" + Name})
	if err != nil {
		return "", fmt.Errorf("replicasets of deployment %s/%s: %w", DefaultNamespace, Name, err)
	}
	for i := range l.Items {
		var rs appsv1.ReplicaSet
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, &rs); err != nil {
			return "", err
		}
		if metav1.IsControlledBy(&rs, d) && rs.Annotations[revisionAnnotation] == rev {
			return rs.Name, nil
		}
	}
	return "", nil
}

// Waits tells Options, once validated, that Wait follows Install: the warning that install
// cannot check from here that every member's pods reach the others (per member) is not said,
// since the leaders' views tell it.
func (o *Options) Waits() {
	if !o.perMember() {
		return
	}
	reach := o.reachWarning()
	o.warnings = slices.DeleteFunc(o.warnings, func(w string) bool { return w == reach })
}
