// Package process holds what a long-running `sync --watch` process needs besides the reconciler:
// leader election on a Lease in one member, and its HTTP endpoints (metrics, pprof, /healthz,
// /readyz).
package process

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

const (
	LeaseName     = rbac.LeaseName
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	// leaseCallTimeout bounds one read or write of the Lease, so that a Lease cluster that does not
	// answer at all (rather than refusing connections) fails the attempt instead of hanging it.
	leaseCallTimeout = 5 * time.Second
)

// leaseState is what the last read or write of the Lease said.
type leaseState struct {
	Cluster string // the Lease cluster's ID
	Tried   bool   // at least one attempt has ended
	Err     error  // the last attempt's error; nil when it succeeded
	Holder  string // the holder seen by the last successful attempt
}

// probeState is everything /readyz decides from.
type probeState struct {
	LeaderElect bool
	Leading     bool
	Synced      bool // caches synced (a replica syncs them only once it leads)
	Lease       leaseState
}

// readiness is the /readyz rule: without leader election, ready once the caches have synced; with
// it, the leader is ready once its caches have synced and a standby is ready while the Lease
// cluster answers (its last Lease read or renewal succeeded: another replica holds the Lease), so
// that a Deployment of several replicas becomes available. The reason is the answer's body.
func readiness(s probeState) (bool, string) {
	switch {
	case !s.LeaderElect && s.Synced:
		return true, "ok"
	case !s.LeaderElect:
		return false, "caches not synced"
	case s.Leading && s.Synced:
		return true, fmt.Sprintf("ok: leading (Lease in cluster %q)", s.Lease.Cluster)
	case s.Leading:
		return false, fmt.Sprintf("leading (Lease in cluster %q), caches not synced", s.Lease.Cluster)
	case !s.Lease.Tried:
		return false, fmt.Sprintf("standing by: the Lease in cluster %q not read yet", s.Lease.Cluster)
	case s.Lease.Err != nil:
		return false, fmt.Sprintf("standing by: Lease cluster %q: %v", s.Lease.Cluster, s.Lease.Err)
	default:
		return true, fmt.Sprintf("ok: standing by (Lease in cluster %q held by %q)", s.Lease.Cluster, s.Lease.Holder)
	}
}

// Elector is one replica's part in the leader election, and its state for /readyz and the log.
type Elector struct {
	member *clusterset.Connection
	mu     sync.Mutex
	lease  leaseState
	lead   bool
	led    bool
	view   func() snapshot.SyncView // what the leader stamps on the Lease (SetView)
}

func (e *Elector) leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lead
}

func (e *Elector) setLeading(v bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lead = v
	e.led = e.led || v
}

func (e *Elector) state() leaseState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lease
}

// observe records one Lease read or write, and logs when the Lease cluster stops or starts
// answering.
func (e *Elector) observe(err error, holder string) {
	e.mu.Lock()
	prev := e.lease
	e.lease.Tried, e.lease.Err = true, err
	if err == nil {
		e.lease.Holder = holder
	}
	e.mu.Unlock()
	id := e.member.ID
	switch {
	case err != nil && (!prev.Tried || prev.Err == nil):
		if isUnreachable(err) {
			klog.ErrorS(err, "Lease cluster unreachable: nobody leads until it answers; retrying", "cluster", id, "context", e.member.Context)
		} else {
			klog.ErrorS(err, "cannot read or write the Lease: nobody leads until this succeeds; retrying", "cluster", id, "context", e.member.Context)
		}
	case err == nil && prev.Tried && prev.Err != nil:
		klog.InfoS("Lease cluster answers again", "cluster", id, "holder", holder)
	case err == nil && holder != prev.Holder:
		klog.InfoS("Lease holder", "cluster", id, "holder", holder)
	}
}

// isUnreachable tells a cluster that did not answer from one that answered with an error.
func isUnreachable(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// observedLock is a Lease lock that reports every read and write to the Elector, bounds each of
// them in time and names the cluster in client-go's own log lines.
type observedLock struct {
	resourcelock.Interface
	e *Elector
}

func (l *observedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, leaseCallTimeout)
	defer cancel()
	rec, raw, err := l.Interface.Get(ctx)
	switch {
	case err == nil:
		l.e.observe(nil, rec.HolderIdentity)
	case !apierrors.IsNotFound(err): // not found: Create follows and reports
		l.e.observe(err, "")
	}
	return rec, raw, err
}

func (l *observedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, ler, l.Interface.Create)
}

func (l *observedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, ler, l.Interface.Update)
}

// write makes one bounded write of the Lease and reports its outcome.
func (l *observedLock) write(ctx context.Context, ler resourcelock.LeaderElectionRecord, f func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	ctx, cancel := context.WithTimeout(ctx, leaseCallTimeout)
	defer cancel()
	err := f(ctx, ler)
	l.e.observe(err, ler.HolderIdentity)
	return err
}

func (l *observedLock) Describe() string {
	return fmt.Sprintf("cluster %q: Lease %s", l.e.member.ID, l.Interface.Describe())
}

// ReadyzHandler serves /readyz by readiness(); ready is closed once the caches have synced, e is
// nil without leader election.
func ReadyzHandler(e *Elector, ready <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		st := probeState{LeaderElect: e != nil}
		select {
		case <-ready:
			st.Synced = true
		default:
		}
		if e != nil {
			st.Leading, st.Lease = e.leading(), e.state()
		}
		ok, reason := readiness(st)
		if !ok {
			http.Error(w, reason, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(reason))
	}
}

// NewElector is a replica's part in the election of the Lease in member m.
func NewElector(m *clusterset.Connection) *Elector {
	return &Elector{member: m, lease: leaseState{Cluster: m.ID}}
}

// Run runs run while this replica holds the Lease. The Lease cluster does not change: while
// it cannot be reached nobody leads and the election keeps trying. Losing the Lease (for instance
// when its cluster stops answering) ends the process with an error, so that a restart stands by
// again from a clean state.
func (e *Elector) Run(ctx context.Context, namespace string, run func(context.Context)) error {
	holder := e.member
	if holder.Err != nil {
		klog.ErrorS(holder.Err, "Lease cluster unreachable at start: nobody leads until it answers; retrying", "cluster", holder.ID, "context", holder.Context)
		e.observe(holder.Err, "")
	}
	host, _ := os.Hostname()
	lock := &observedLock{e: e, Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: namespace},
		Client:     stampedLeases{LeasesGetter: holder.Client.CoordinationV1(), e: e},
		LockConfig: resourcelock.ResourceLockConfig{Identity: host + "_" + uuid.NewString()},
	}}
	klog.InfoS("leader election", "cluster", holder.ID, "lease", namespace+"/"+LeaseName, "identity", lock.Identity())
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				e.setLeading(true)
				klog.InfoS("leading", "cluster", holder.ID)
				run(ctx)
			},
			OnStoppedLeading: func() {
				if e.leading() {
					klog.InfoS("leadership lost or released", "cluster", holder.ID)
				}
				e.setLeading(false)
			},
		},
		Name: LeaseName,
	})
	e.mu.Lock()
	led := e.led
	e.mu.Unlock()
	if ctx.Err() == nil && led {
		return fmt.Errorf("lost the Lease in cluster %q; exiting", holder.ID)
	}
	return nil
}
