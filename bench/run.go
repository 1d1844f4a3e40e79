package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	light      bool              // no namespace controller: the bench empties what it deletes
}

type bench struct {
	config
	members   []*member
	exporters []*member
	sources   map[string]*discoveryv1.EndpointSlice // member1's source slices, by service
	syncs     []*syncProc                           // the processes under test, the measured one first
	// The mcs-api version the exports are written in (empty: v1beta1); Karmada's members serve
	// the v1alpha1 CRDs Karmada bundles.
	exportVersion string
	// Sync's memory limit (KUBECTL_MCS_MEMORY_LIMIT), as the generated Deployment gives it (0: none).
	memoryLimitMiB float64
}

func run(ctx context.Context, c config) (*Results, error) {
	b := &bench{config: c, sources: map[string]*discoveryv1.EndpointSlice{}}
	if err := b.connect(); err != nil {
		return nil, err
	}
	b.exporters = b.members[:2]
	res := &Results{Date: time.Now().UTC().Format(time.RFC3339), Binary: binaryVersion(c.binary), Machine: machine(), Services: c.services,
		Clusters: len(b.members), Samples: c.samples, ImportingClusters: len(b.members), Load: loadAvg(),
		Light: c.light, EndpointsPerSlice: endpointsPerSlice}
	if c.mode == modePerMember {
		res.Mode, res.Measured = string(c.mode), c.contexts[0]
	}
	if c.qps > 0 {
		res.QPS, res.Burst = c.qps, c.burst
	}
	res.Workers = c.workers

	root := bedRoot(c.kubeconfig)
	if empty := bedSample(root, c.contexts); len(empty) > 0 {
		res.Bed = &BedUse{Members: len(b.members), EmptyAPIServerRSSMiB: meanRSS(empty, "kube-apiserver", len(b.members)),
			EmptyEtcdRSSMiB: meanRSS(empty, "etcd", len(b.members))}
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

	if c.scale {
		// Sync runs as in the Deployment `sync --print-manifests` generates for this clusterset:
		// with the memory limit it sizes from the exports, which sync keeps its heap under.
		if res.DeploymentMemoryRequestMiB, res.DeploymentMemoryLimitMiB, err = b.deploymentMemory(); err != nil {
			return nil, fmt.Errorf("the generated Deployment's memory: %w", err)
		}
		b.memoryLimitMiB = res.DeploymentMemoryLimitMiB
		logf("the generated Deployment: memory request %.0f MiB, limit %.0f MiB (sync runs with that limit)", res.DeploymentMemoryRequestMiB, res.DeploymentMemoryLimitMiB)
	}

	// (b) cold start: process start to every import, derived IP, slice and export condition.
	logf("cold start of sync --watch (%s mode: %d processes)", c.mode, len(locals(c.mode, c.contexts)))
	if err := b.startSyncs(); err != nil {
		return nil, err
	}
	defer b.stopSyncs()
	pids := b.syncPIDs()
	t0, cpu0, bed0 := time.Now(), sampleCPU(pids), bedSample(root, c.contexts)
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
	res.ConvergeCPU = sampleCPU(pids).since(cpu0)
	if res.Bed != nil {
		res.Bed.ConvergeCPUS = cpuBetween(bed0, bedSample(root, c.contexts))
	}
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
	bed0 = bedSample(root, c.contexts)
	if res.ConvergeFloorS, res.ReplayCPU, err = b.replayFloor(ctx, counts, pids, false); err != nil {
		return nil, err
	}
	if res.Bed != nil {
		res.Bed.ReplayCPUS = cpuBetween(bed0, bedSample(root, c.contexts))
	}
	logf("replay floor: %v", res.ReplayCPU)
	if c.watchedReplay {
		if res.ConvergeWatchedFloorS, res.WatchedReplayCPU, err = b.replayFloor(ctx, counts, pids, true); err != nil {
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
	cpu0 = sampleCPU(pids)
	ps, err := b.samplePropagation(ctx, 0, c.samples, time.Time{}, watchers)
	if err != nil {
		return nil, err
	}
	if u := sampleCPU(pids).since(cpu0); u != nil {
		res.PropagationSyncCPUS, res.PropagationSyncsCPUS = syncCPU(u), allSyncsCPU(u)
	}
	after, err := b.quiet(ctx)
	if err != nil {
		return nil, err
	}
	b.saveMetrics(outDir + "/metrics-propagated.log")
	res.WritesPerChange = float64(after-before) / float64(c.samples)
	res.PropagationP50, res.PropagationP99 = percentile(ps.lat, 50), percentile(ps.lat, 99)
	res.FloorP50, res.FloorP99 = percentile(ps.floor, 50), percentile(ps.floor, 99)
	res.SliceFloorP50, res.SliceFloorP99 = percentile(ps.sliceFloor, 50), percentile(ps.sliceFloor, 99)
	res.ApplyFloorP50 = percentile(ps.applyFloor, 50)
	res.FanOutP50, res.FanOutP99 = percentile(ps.fanOut, 50), percentile(ps.fanOut, 99)

	// (c) idle.
	logf("idle for %v", c.idle)
	bed0 = bedSample(root, c.contexts)
	time.Sleep(c.idle)
	if bed1 := bedSample(root, c.contexts); res.Bed != nil {
		res.Bed.IdleCPUPct = round2(100 * cpuBetween(bed0, bed1) / c.idle.Seconds() / float64(len(b.members)))
		res.Bed.APIServerRSSMiB, res.Bed.EtcdRSSMiB = meanRSS(bed1, "kube-apiserver", len(b.members)), meanRSS(bed1, "etcd", len(b.members))
		logf("members: apiserver %.0f MiB, etcd %.0f MiB each (%.0f and %.0f empty), %.1f%% of a core each when idle",
			res.Bed.APIServerRSSMiB, res.Bed.EtcdRSSMiB, res.Bed.EmptyAPIServerRSSMiB, res.Bed.EmptyEtcdRSSMiB, res.Bed.IdleCPUPct)
	}
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
	if res.PeakRSSMiB, res.SyncsPeakRSSMiB, err = b.peakRSSOf(); err != nil {
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
		logf("the generated Deployment's memory limit %.0f MiB; peak RSS %.0f MiB", res.DeploymentMemoryLimitMiB, res.PeakRSSMiB)
		b.saveProfile("heap", "heap", 0)
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
	b.stopSyncs()
	return res, nil
}
