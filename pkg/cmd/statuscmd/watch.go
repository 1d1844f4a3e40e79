package statuscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

const (
	// probeInterval is how often --watch asks each member whether it is still there; the objects
	// themselves come from watches, never from polling.
	probeInterval = 2 * time.Second
	// settle coalesces a burst of events (a sync pass writes many objects) into one redraw.
	settle = 150 * time.Millisecond
	// syncTimeout bounds the wait for the members' first lists before the first draw; a member
	// that joins later appears then.
	syncTimeout = 30 * time.Second
)

// watch keeps the members' caches (pkg/member) and redraws whenever anything changes.
func (o *Options) watch(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	ms := member.New(o.members, member.Config{Namespace: o.namespace, ProbeInterval: probeInterval, RetryCap: probeInterval,
		Handlers: member.Handlers{
			Object:    func(*member.Cache, string, types.NamespacedName, any, bool) { notify() },
			Namespace: func(string) { notify() },
			Health:    notify,
		}})
	for _, m := range ms {
		go m.Run(ctx)
	}
	member.Wait(ctx, ms, syncTimeout)
	states := map[string]snapshot.State{}
	snapshot := func() (runtime.Object, error) {
		clusters := make([]snapshot.Cluster, len(ms))
		for i, m := range ms {
			clusters[i] = m.View()
		}
		o.warn(clusters, states)
		if err := nothingRead(clusters); err != nil {
			return nil, err
		}
		l := status.Build(clusters)
		status.SetDNSNames(l, o.DNSDomain)
		_ = o.filter(l)
		return l, nil
	}
	return o.redraw(ctx, changed, snapshot, func(w *bytes.Buffer, obj runtime.Object) error {
		return o.print(w, obj.(*status.MultiClusterServiceStatusList))
	})
}

// redraw prints the first snapshot, then a new one after each burst of changes whose document
// differs from the last one printed. On a terminal the table replaces the previous one.
func (o *Options) redraw(ctx context.Context, changed <-chan struct{}, snapshot func() (runtime.Object, error), render func(*bytes.Buffer, runtime.Object) error) error {
	var last []byte
	first := true
	for {
		obj, err := snapshot()
		if err != nil && first {
			return err
		}
		if err == nil {
			doc, _ := json.Marshal(obj)
			if !bytes.Equal(doc, last) {
				last = doc
				if !first && o.printer == nil {
					sep := "\n"
					if o.terminal {
						sep = "\x1b[H\x1b[2J"
					}
					if _, err := io.WriteString(o.Out, sep); err != nil {
						return err
					}
				}
				// Rendered whole, then written at once: a redraw never shows half a table.
				var buf bytes.Buffer
				if err := render(&buf, obj); err != nil {
					return err
				}
				if _, err := io.WriteString(o.Out, printers.Cut(buf.String(), o.width())); err != nil {
					return err
				}
				first = false
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(settle):
		}
	}
}

// width is the terminal's width when the redraw is a table or description on a terminal, else 0
// (no cut: a pipe or a file gets whole lines, and -o documents are never cut).
func (o *Options) width() int {
	if !o.terminal || o.printer != nil || o.PrintFlags.Name() {
		return 0
	}
	return printers.TerminalWidth(o.Out)
}
