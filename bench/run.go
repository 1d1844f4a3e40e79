package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

const (
	ns      = "mcs-bench"
	floorNS = "mcs-bench-floor"
)

// member holds two clients per cluster: a fast one for setting up and watching, and one built
// exactly as kubectl-mcs builds its own (same QPS and burst) for the floors.
type member struct {
	name       string
	fast, same kubernetes.Interface
	dyn        dynamic.Interface
	sameDyn    dynamic.Interface // rate-limited like sync, for the replay floor
	raw        rest.Interface    // protobuf where offered, for the status floor
}

type bench struct {
	config
	members   []*member
	exporters []*member
	sources   map[string]*discoveryv1.EndpointSlice // member1's source slices, by service
	metrics   string
}

func run(ctx context.Context, c config) (*Results, error) {
	b := &bench{config: c, sources: map[string]*discoveryv1.EndpointSlice{}}
	if err := b.connect(); err != nil {
		return nil, err
	}
	b.exporters = b.members[:2]
	res := &Results{Date: time.Now().UTC().Format(time.RFC3339), Binary: binaryVersion(c.binary), Machine: machine(), Services: c.services,
		Clusters: len(b.members), Samples: c.samples, ImportingClusters: len(b.members), Load: loadAvg()}
	if c.qps > 0 {
		res.QPS, res.Burst = c.qps, c.burst
	}
	if c.workers != 4 {
		res.Workers = c.workers
	}

	logf("init and a fresh %s namespace in %d clusters", ns, len(b.members))
	if out, err := exec.Command(c.binary, "--kubeconfig", c.kubeconfig, "init", "--contexts", strings.Join(c.contexts, ",")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl mcs init: %v: %s", err, out)
	}
	if err := b.namespaces(ctx); err != nil {
		return nil, err
	}
	logf("creating %d services with endpoints and exports in %s and %s", c.services, b.exporters[0].name, b.exporters[1].name)
	if err := b.populate(ctx, 0, c.services); err != nil {
		return nil, err
	}
	watchers, converged, err := b.watchAll(ctx)
	if err != nil {
		return nil, err
	}

	// (b) cold start: process start to every import, derived IP, slice and export condition.
	logf("cold start of sync --watch")
	proc, err := b.startSync()
	if err != nil {
		return nil, err
	}
	defer proc.Process.Kill() //nolint:errcheck
	t0, cpu0 := time.Now(), sampleCPU(proc.Process.Pid)
	b.profileConverge(ctx)
	// Checking is O(services x clusters): at scale, less often, so the bench does not steal the
	// cores sync needs.
	every, limit := convergePolling(c.services, len(b.members))
	if err := wait.PollUntilContextTimeout(ctx, every, limit, true, func(context.Context) (bool, error) {
		return converged(c.services), nil
	}); err != nil {
		return nil, fmt.Errorf("sync did not converge within %v (see %s)", limit, syncLog)
	}
	res.ConvergeS = time.Since(t0).Seconds()
	res.ConvergeCPU = sampleCPU(proc.Process.Pid).since(cpu0)
	logf("converge: %v", res.ConvergeCPU)
	if _, err := b.quiet(ctx); err != nil {
		return nil, err
	}
	b.saveMetrics(outDir + "/metrics-converged.log")
	perCluster := map[string]int{}
	for _, m := range b.members {
		w, err := b.writes(`cluster="` + m.name + `"`)
		if err != nil {
			return nil, err
		}
		perCluster[m.name] = w
		res.ConvergeWrites += w
	}
	logf("converged in %.1fs with %d writes %v; floors: as many ConfigMap creates, then the same writes replayed by a plain client", res.ConvergeS, res.ConvergeWrites, perCluster)
	counts, err := b.replayCounts()
	if err != nil {
		return nil, err
	}
	if res.ConvergeCreateFloorS, err = b.writeFloor(ctx, perCluster); err != nil {
		return nil, err
	}
	if res.ConvergeFloorS, res.ReplayCPU, err = b.replayFloor(ctx, counts, proc.Process.Pid, false); err != nil {
		return nil, err
	}
	logf("replay floor: %v", res.ReplayCPU)
	if c.watchedReplay {
		if res.ConvergeWatchedFloorS, res.WatchedReplayCPU, err = b.replayFloor(ctx, counts, proc.Process.Pid, true); err != nil {
			return nil, err
		}
		logf("watched replay floor: %.1f s; %v", res.ConvergeWatchedFloorS, res.WatchedReplayCPU)
	}
	logf("floors: %.1f s of ConfigMap creates, %.1f s replayed", res.ConvergeCreateFloorS, res.ConvergeFloorS)
	res.FloorFraction = c.floorFraction

	// (a), (c) propagation and writes per change, engine and floor samples interleaved so both
	// see the same machine.
	logf("%d propagation samples", c.samples)
	before, err := b.quiet(ctx)
	if err != nil {
		return nil, err
	}
	lat, floor, fanOut, err := b.samplePropagation(ctx, 0, c.samples, time.Time{}, watchers)
	if err != nil {
		return nil, err
	}
	after, err := b.quiet(ctx)
	if err != nil {
		return nil, err
	}
	b.saveMetrics(outDir + "/metrics-propagated.log")
	res.WritesPerChange = float64(after-before) / float64(c.samples)
	res.PropagationP50, res.PropagationP99 = percentile(lat, 50), percentile(lat, 99)
	res.FloorP50, res.FloorP99 = percentile(floor, 50), percentile(floor, 99)
	res.FanOutP50, res.FanOutP99 = percentile(fanOut, 50), percentile(fanOut, 99)

	// (c) idle.
	logf("idle for %v", c.idle)
	time.Sleep(c.idle)
	idle, err := b.writes()
	if err != nil {
		return nil, err
	}
	res.IdleWrites, res.IdleSeconds = idle-after, c.idle.Seconds()

	// Propagation again while other services change at busyRate per second (bench-scale).
	if c.busyRate > 0 {
		// Recorded, not fatal: the other figures of a long run still count.
		if err := b.busyPhase(ctx, res, watchers); err != nil {
			logf("busy phase: %v", err)
			res.BusyError = err.Error()
		}
	}

	// (d) peak RSS.
	if res.PeakRSSMiB, err = peakRSS(proc.Process.Pid); err != nil {
		return nil, err
	}
	if c.scale {
		if res.CachedEndpoints, err = b.cachedEndpoints(ctx); err != nil {
			return nil, err
		}
		res.RSSPerEndpointKiB = res.PeakRSSMiB * 1024 / float64(res.CachedEndpoints)
		if res.InformerFloorRSSMiB, err = b.informerFloor(ctx); err != nil {
			return nil, err
		}
		logf("peak RSS %.0f MiB, %.2f KiB per cached endpoint; bare informers over the same objects: %.0f MiB", res.PeakRSSMiB, res.RSSPerEndpointKiB, res.InformerFloorRSSMiB)
		b.saveProfile("heap", 0)
	}

	// status -A at scale, against the bare lists it needs.
	if c.statusServices > 0 {
		if err := b.statusPhase(ctx, res, converged); err != nil {
			return nil, err
		}
		if err := b.diagnosePhase(ctx, res); err != nil {
			return nil, err
		}
	}
	_ = proc.Process.Signal(syscall.SIGTERM)
	_ = proc.Wait()
	return res, nil
}

// binaryVersion is what `kubectl mcs version` says of the binary ("" if it says nothing).
func binaryVersion(binary string) string {
	out, err := exec.Command(binary, "version", "-o", "json").Output()
	if err != nil {
		return ""
	}
	var v struct{ Version string }
	_ = json.Unmarshal(out, &v)
	return v.Version
}

func (b *bench) connect() error {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &b.kubeconfig
	// The floors' client is built as sync builds its own, with the same rate limit.
	loader := &clusterset.Loader{ConfigFlags: flags, QPS: float32(b.qps), Burst: b.burst}
	for _, ctx := range b.contexts {
		same, err := loader.RESTConfig(ctx)
		if err != nil {
			return fmt.Errorf("context %s: %w", ctx, err)
		}
		fast := rest.CopyConfig(same)
		fast.Timeout = 5 * time.Minute // lists of tens of thousands of objects
		fast.QPS, fast.Burst = 1000, 2000
		m := &member{name: ctx}
		if m.fast, err = kubernetes.NewForConfig(fast); err != nil {
			return err
		}
		if m.same, err = kubernetes.NewForConfig(same); err != nil {
			return err
		}
		if m.dyn, err = dynamic.NewForConfig(fast); err != nil {
			return err
		}
		if m.sameDyn, err = dynamic.NewForConfig(same); err != nil {
			return err
		}
		pb := rest.CopyConfig(fast)
		pb.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		pc, err := kubernetes.NewForConfig(pb)
		if err != nil {
			return err
		}
		m.raw = pc.CoreV1().RESTClient()
		b.members = append(b.members, m)
	}
	return nil
}

func (b *bench) namespaces(ctx context.Context) error {
	for _, m := range b.members {
		for _, n := range []string{ns, floorNS} {
			if err := freshNamespace(ctx, m, n); err != nil {
				return err
			}
			if n == floorNS {
				hop := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hop"}, Data: map[string]string{"token": "-"}}
				if _, err := m.fast.CoreV1().ConfigMaps(n).Create(ctx, hop, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
		}
	}
	return nil
}

// freshNamespace deletes namespace n in m, waits until it is gone, and creates it again.
func freshNamespace(ctx context.Context, m *member, n string) error {
	if err := deleteNamespace(ctx, m, n, 3*time.Minute); err != nil {
		return err
	}
	if _, err := m.fast.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	return nil
}

// deleteNamespace deletes namespace n in m and waits until it is gone.
func deleteNamespace(ctx context.Context, m *member, n string, timeout time.Duration) error {
	_ = m.fast.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{})
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := m.fast.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		return fmt.Errorf("%s: namespace %s not deleted within %v", m.name, n, timeout)
	}
	return nil
}

func svcName(i int) string { return fmt.Sprintf("svc-%04d", i) }

// address i of exporter e: unique across the bench.
func address(e, i, k int) string {
	n := i*2 + k
	return fmt.Sprintf("10.%d.%d.%d", 100+e, n/250, n%250+1)
}

// populate creates, in both exporters, N selectorless Services whose EndpointSlices the bench
// writes itself (so a source change is one precise write), and their ServiceExports.
func (b *bench) populate(ctx context.Context, from, to int) error {
	var mu sync.Mutex
	return parallel(16, (to-from)*len(b.exporters), func(n int) error {
		e, i := n%len(b.exporters), from+n/len(b.exporters)
		m, name := b.exporters[e], svcName(i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
		if _, err := m.fast.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: service %s: %w", m.name, name, err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-src", Labels: map[string]string{
				discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "bench.kubectl-mcs.io"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for k := 0; k < 2; k++ {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(e, i, k)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		created, err := m.fast.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("%s: slice %s: %w", m.name, name, err)
		}
		if e == 0 {
			mu.Lock()
			b.sources[name] = created
			mu.Unlock()
		}
		se := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
			"metadata": map[string]any{"name": name, "namespace": ns}}}
		if _, err := m.dyn.Resource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).Namespace(ns).Create(ctx, se, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: export %s: %w", m.name, name, err)
		}
		return nil
	})
}

// watchAll watches managed slices, imports and exports everywhere; converged reports whether
// every cluster holds all want imports with their IP and a slice per exporter, and every export
// is Ready.
func (b *bench) watchAll(ctx context.Context) (map[string]*seer, func(want int) bool, error) {
	seers := map[string]*seer{}
	var imports, exports []cache.Store
	for _, m := range b.members {
		s, err := watchSlices(ctx, m.fast, ns)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name] = s
		if s, err = watchConfigMaps(ctx, m.same, floorNS); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name+"/floor"] = s
		if s, err = watchSlices(ctx, m.same, floorNS); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.name, err)
		}
		seers[m.name+"/floor-slices"] = s
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m.dyn, 0, ns, nil)
		si := f.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports)).Informer()
		se := f.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).Informer()
		f.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), si.HasSynced, se.HasSynced) {
			return nil, nil, fmt.Errorf("%s: watch did not sync", m.name)
		}
		imports, exports = append(imports, si.GetStore()), append(exports, se.GetStore())
	}
	converged := func(want int) bool {
		for i := range b.members {
			if len(seers[b.members[i].name].store.List()) != want*len(b.exporters) {
				return false
			}
			n := 0
			for _, o := range imports[i].List() {
				if ips, _, _ := unstructured.NestedStringSlice(o.(*unstructured.Unstructured).Object, "spec", "ips"); len(ips) > 0 {
					n++
				}
			}
			if n != want {
				return false
			}
			if i < len(b.exporters) {
				n = 0
				for _, o := range exports[i].List() {
					if ready(o.(*unstructured.Unstructured)) {
						n++
					}
				}
				if n != want {
					return false
				}
			}
		}
		return true
	}
	return seers, converged, nil
}

func ready(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func (b *bench) startSync() (*exec.Cmd, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b.metrics = "http://" + l.Addr().String() + "/metrics"
	addr := l.Addr().String()
	l.Close()
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(syncLog)
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig", b.kubeconfig, "sync", "--watch", "-n", ns,
		"--contexts", strings.Join(b.contexts, ","), "--metrics-bind-address", addr}
	if b.qps > 0 {
		args = append(args, "--kube-api-qps", strconv.FormatFloat(b.qps, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(b.burst))
	}
	if b.profileDir != "" {
		args = append(args, "--profiling")
	}
	if b.workers > 0 {
		args = append(args, "--workers", strconv.Itoa(b.workers))
	}
	cmd := exec.Command(b.binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Start()
	log.Close() // the child holds its own descriptor
	return cmd, err
}

// saveMetrics keeps a scrape for reading the writes by kind and verb.
func (b *bench) saveMetrics(path string) {
	resp, err := http.Get(b.metrics)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	_ = os.WriteFile(path, data, 0o644)
}

// writes is the sync process's API write counter (optionally for one cluster label).
func (b *bench) writes(labels ...string) (int, error) {
	v, _, err := promtext.Scrape(b.metrics, "kubectl_mcs_writes_total", labels...)
	return int(v), err
}

// quiet waits until the queue is empty and the write counter has not moved for a second.
func (b *bench) quiet(ctx context.Context) (int, error) {
	last, since := -1, time.Now()
	for {
		w, err := b.writes()
		if err != nil {
			return 0, err
		}
		depth, _, err := promtext.Scrape(b.metrics, "kubectl_mcs_queue_depth")
		if err != nil {
			return 0, err
		}
		if w != last || depth > 0 {
			last, since = w, time.Now()
		} else if time.Since(since) > time.Second {
			return w, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
