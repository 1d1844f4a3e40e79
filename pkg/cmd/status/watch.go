package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

const (
	// probeInterval is how often --watch asks each member whether it is still there; the objects
	// themselves come from watches, never from polling.
	probeInterval = 2 * time.Second
	// settle coalesces a burst of events (a sync pass writes many objects) into one redraw.
	settle = 150 * time.Millisecond
	// syncTimeout bounds the initial list of a member's informers.
	syncTimeout = 30 * time.Second
)

// watchedMember is one member's informer caches and health in --watch.
type watchedMember struct {
	*clusterset.Member
	ns string

	mu      sync.Mutex
	state   status.ClusterState
	message string
	version string
	started bool
	stop    context.CancelFunc

	services   corelisters.ServiceLister
	slices     discoverylisters.EndpointSliceLister
	namespaces corelisters.NamespaceLister
	exports    cache.Store // typed by decode.Transform
	imports    cache.Store
}

// start runs the member's informers and waits for their first list. Every event calls notify.
// Only one goroutine at a time calls it (the initial start, then the member's probe loop).
func (w *watchedMember) start(ctx context.Context, notify func()) {
	w.mu.Lock()
	started := w.started
	w.mu.Unlock()
	if started || w.Config == nil {
		return
	}
	state, message := w.startInformers(ctx, notify)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state, w.message = state, message
}

func (w *watchedMember) startInformers(ctx context.Context, notify func()) (status.ClusterState, string) {
	v, err := mcsapi.ServedVersion(w.Discovery)
	if errors.As(err, &mcsapi.ErrNotInstalled{}) {
		return status.ClusterNoCRDs, err.Error()
	}
	if err != nil {
		return status.ClusterUnreachable, err.Error()
	}
	kc, err := status.ProtobufClient(w.Config)
	if err != nil {
		return status.ClusterError, err.Error()
	}
	ictx, cancel := context.WithCancel(ctx)
	kf := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(w.ns))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.Dynamic, 0, w.ns, nil)
	svc, sl, nsi := kf.Core().V1().Services(), kf.Discovery().V1().EndpointSlices(), kf.Core().V1().Namespaces()
	se, si := df.ForResource(mcsapi.GVR(v, mcsapi.ServiceExports)), df.ForResource(mcsapi.GVR(v, mcsapi.ServiceImports))
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	var synced []cache.InformerSynced
	// Decoded once as they arrive, not on every redraw.
	if err := errors.Join(se.Informer().SetTransform(decode.Transform[mcsv1beta1.ServiceExport]),
		si.Informer().SetTransform(decode.Transform[mcsv1beta1.ServiceImport])); err != nil {
		cancel()
		return status.ClusterError, err.Error()
	}
	for _, inf := range []cache.SharedIndexInformer{svc.Informer(), sl.Informer(), nsi.Informer(), se.Informer(), si.Informer()} {
		// Watch errors of an unreachable member are what the probe reports; keep them quiet.
		_ = inf.SetWatchErrorHandler(func(*cache.Reflector, error) {})
		if _, err := inf.AddEventHandler(h); err != nil {
			cancel()
			return status.ClusterError, err.Error()
		}
		synced = append(synced, inf.HasSynced)
	}
	kf.Start(ictx.Done())
	df.Start(ictx.Done())
	sctx, scancel := context.WithTimeout(ictx, syncTimeout)
	defer scancel()
	if !cache.WaitForCacheSync(sctx.Done(), synced...) {
		cancel()
		return status.ClusterUnreachable, fmt.Sprintf("caches not synced within %v", syncTimeout)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.services, w.slices, w.namespaces = svc.Lister(), sl.Lister(), nsi.Lister()
	w.exports, w.imports = se.Informer().GetStore(), si.Informer().GetStore()
	w.version, w.started = v, true
	w.stop = cancel // the informers run until --watch ends
	return status.ClusterReachable, ""
}

// probe updates the member's reachability; it returns true when it changed.
func (w *watchedMember) probe(ctx context.Context) bool {
	if w.Client == nil {
		return false
	}
	err := clusterset.Probe(ctx, w.Client.Discovery(), probeInterval)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		return false
	}
	was := w.state
	if err != nil {
		w.state, w.message = status.ClusterUnreachable, err.Error()
	} else {
		w.state, w.message = status.ClusterReachable, ""
	}
	return was != w.state
}

// snapshot is the member as its caches see it now.
func (w *watchedMember) snapshot() status.Cluster {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := status.Cluster{ID: w.ID, Context: w.Context, State: w.state, Message: w.message, MCSAPIVersion: w.version}
	if !w.started {
		return c
	}
	c.LastKnown = w.state != status.ClusterReachable
	c.Services, _ = w.services.List(labels.Everything())
	c.EndpointSlices, _ = w.slices.List(labels.Everything())
	nss, _ := w.namespaces.List(labels.Everything())
	for _, n := range nss {
		c.Namespaces = append(c.Namespaces, n.Name)
	}
	c.ServiceExports = decode.List[mcsv1beta1.ServiceExport](w.exports)
	c.ServiceImports = decode.List[mcsv1beta1.ServiceImport](w.imports)
	return c
}

// watch keeps one informer set per member and redraws whenever anything changes.
func (o *Options) watch(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	ws := make([]*watchedMember, len(o.members))
	var wg sync.WaitGroup
	for i, m := range o.members {
		ws[i] = &watchedMember{Member: m, ns: o.namespace, state: status.ClusterUnreachable}
		if m.Err != nil {
			ws[i].message = m.Err.Error()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws[i].start(ctx, notify)
		}()
	}
	wg.Wait()
	for _, w := range ws {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			w.mu.Lock()
			started := w.started
			w.mu.Unlock()
			if !started {
				w.start(ctx, notify) // came back, or got its CRDs
				if w.snapshotState() != status.ClusterUnreachable {
					notify()
				}
				return
			}
			if w.probe(ctx) {
				notify()
			}
		}, probeInterval)
	}
	states := map[string]status.ClusterState{}
	snapshot := func() (runtime.Object, error) {
		clusters := make([]status.Cluster, len(ws))
		for i, w := range ws {
			clusters[i] = w.snapshot()
		}
		o.warn(clusters, states)
		if err := nothingRead(clusters); err != nil {
			return nil, err
		}
		l := status.Build(clusters)
		_ = o.filter(l)
		return l, nil
	}
	return o.redraw(ctx, changed, snapshot, func(w *bytes.Buffer, obj runtime.Object) error {
		return o.print(w, obj.(*status.MultiClusterServiceStatusList))
	})
}

func (w *watchedMember) snapshotState() status.ClusterState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
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
				if _, err := o.Out.Write(buf.Bytes()); err != nil {
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
