package reconciler

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

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

func newEvents(client kubernetes.Interface) *events {
	e := &events{broadcaster: record.NewBroadcaster()}
	e.broadcaster.StartRecordingToSink(&countingSink{EventSink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}, written: &e.written})
	e.EventRecorder = e.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: names.FieldManager})
	return e
}

func (e *events) Eventf(obj *corev1.ObjectReference, eventtype, reason, messageFmt string, args ...any) {
	e.recorded.Add(1)
	e.EventRecorder.Eventf(obj, eventtype, reason, messageFmt, args...)
}

// flush waits until every recorded event was written, or timeout, then stops the recorder.
func (e *events) flush(ctx context.Context, timeout time.Duration) {
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return e.written.Load() >= e.recorded.Load(), nil
	})
	e.broadcaster.Shutdown()
}

type countingSink struct {
	record.EventSink
	written *atomic.Int64
}

func (s *countingSink) Create(ev *corev1.Event) (*corev1.Event, error) {
	defer s.written.Add(1)
	return s.EventSink.Create(ev)
}

func (s *countingSink) Update(ev *corev1.Event) (*corev1.Event, error) {
	defer s.written.Add(1)
	return s.EventSink.Update(ev)
}

func (s *countingSink) Patch(ev *corev1.Event, data []byte) (*corev1.Event, error) {
	defer s.written.Add(1)
	return s.EventSink.Patch(ev, data)
}
