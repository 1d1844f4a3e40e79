package process

// The leader stamps its view (snapshot.SyncView) on the Lease with each write the election makes,
// so that status and diagnose see what the running sync sees at no write of its own.

import (
	"context"
	"encoding/json"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// SetView gives the Elector what the leader publishes; until then, or while it does not lead,
// its writes of the Lease carry no view.
func (e *Elector) SetView(view func() snapshot.SyncView) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.view = view
}

// viewJSON is the view to stamp, "" for none.
func (e *Elector) viewJSON() string {
	e.mu.Lock()
	view, lead := e.view, e.lead
	e.mu.Unlock()
	if view == nil || !lead {
		return ""
	}
	b, err := json.Marshal(view())
	if err != nil {
		return ""
	}
	return string(b)
}

// stampedLeases are the Lease client of the election, stamping the view on every create and update.
type stampedLeases struct {
	coordinationv1client.LeasesGetter
	e *Elector
}

func (s stampedLeases) Leases(namespace string) coordinationv1client.LeaseInterface {
	return stampedLease{LeaseInterface: s.LeasesGetter.Leases(namespace), e: s.e}
}

type stampedLease struct {
	coordinationv1client.LeaseInterface
	e *Elector
}

func (s stampedLease) Create(ctx context.Context, l *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error) {
	return s.LeaseInterface.Create(ctx, s.stamp(l), o)
}

func (s stampedLease) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	return s.LeaseInterface.Update(ctx, s.stamp(l), o)
}

// stamp sets this sync's view, or takes the predecessor's away: the write that acquires the Lease
// is made before this one leads, and a view left there would be told as the new holder's (install
// --wait took a former leader's "every member read" for the new pods').
func (s stampedLease) stamp(l *coordinationv1.Lease) *coordinationv1.Lease {
	v := s.e.viewJSON()
	if _, had := l.Annotations[snapshot.SyncViewAnnotation]; v == "" && !had {
		return l
	}
	l = l.DeepCopy()
	if v == "" {
		delete(l.Annotations, snapshot.SyncViewAnnotation)
		return l
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[snapshot.SyncViewAnnotation] = v
	return l
}
