package reconciler

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// events is one member's EventRecorder. The recorder writes in the background; flush lets the
// one-shot `sync` wait for what it recorded before it exits.
type events struct {
	record.EventRecorder
	broadcaster record.EventBroadcaster
	// recorded counts Eventf calls, written the sink's writes (an event the correlator drops
	// as spam is never written: flush's timeout covers it).
	recorded, written atomic.Int64
}

func newEvents(cluster func() string, client kubernetes.Interface) *events {
	e := &events{broadcaster: record.NewBroadcaster()}
	e.broadcaster.StartRecordingToSink(&createOnlySink{sink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}, cluster: cluster, written: &e.written})
	e.EventRecorder = e.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: names.FieldManager})
	return e
}

func (e *events) Eventf(obj *corev1.ObjectReference, eventtype, reason, messageFmt string, args ...any) {
	e.recorded.Add(1)
	e.EventRecorder.Eventf(obj, eventtype, reason, messageFmt, args...)
}

// flush waits until every recorded event was written, or ctx ends, then stops the recorder.
func (e *events) flush(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		return e.written.Load() >= e.recorded.Load(), nil
	})
	e.broadcaster.Shutdown()
}

// createOnlySink writes every Event as a new one: a repeat, which the recorder would count up with
// a patch, is created again, so that sync needs no right on Events but create (pkg/rbac). It
// counts what it wrote, and says which cluster refused one.
type createOnlySink struct {
	sink    record.EventSink
	cluster func() string // the member's ID now
	written *atomic.Int64
}

func (s *createOnlySink) Create(ev *corev1.Event) (*corev1.Event, error) {
	defer s.written.Add(1)
	out, err := s.sink.Create(ev)
	if apierrors.IsForbidden(err) {
		klog.ErrorS(err, "forbidden: could not record event", "cluster", s.cluster(), "object", ev.InvolvedObject.Namespace+"/"+ev.InvolvedObject.Name)
	}
	return out, err
}

func (s *createOnlySink) Update(ev *corev1.Event) (*corev1.Event, error) { return s.again(ev) }

func (s *createOnlySink) Patch(ev *corev1.Event, _ []byte) (*corev1.Event, error) { return s.again(ev) }

func (s *createOnlySink) again(ev *corev1.Event) (*corev1.Event, error) {
	n := ev.DeepCopy()
	n.Name, n.ResourceVersion, n.Count = fmt.Sprintf("%s.%x", ev.InvolvedObject.Name, time.Now().UnixNano()), "", 1
	n.FirstTimestamp = n.LastTimestamp
	return s.Create(n)
}
