package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

const statusRuns = 5

// statusPhase grows the clusterset to statusServices exported services, lets sync import them
// all, then times `kubectl mcs status -A` (the whole process, as a user runs it) against the
// floor: the same lists made directly, all clusters at once. Runs are interleaved; medians kept.
func (b *bench) statusPhase(ctx context.Context, res *Results, converged func(int) bool) error {
	n := max(b.statusServices, b.services)
	logf("status: growing to %d exported services and letting sync import them", n)
	if err := b.populate(ctx, b.services, n); err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		return converged(n), nil
	}); err != nil {
		return fmt.Errorf("sync did not import %d services within 10 minutes (see %s)", n, syncLog)
	}
	var took, floor []float64
	for i := 0; i < statusRuns; i++ {
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, b.binary, "--kubeconfig", b.kubeconfig, "status", "-A", "--contexts", strings.Join(b.contexts, ","), "-o", "json")
		cmd.Stdout = io.Discard
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubectl mcs status -A: %v: %s", err, stderr.String())
		}
		took = append(took, time.Since(t0).Seconds())
		d, err := b.bareLists(ctx)
		if err != nil {
			return err
		}
		floor = append(floor, d)
	}
	res.StatusServices, res.StatusS, res.StatusFloorS = n, median(took), median(floor)
	logf("status -A: %.2fs, bare lists %.2fs (medians of %d)", res.StatusS, res.StatusFloorS, statusRuns)
	return nil
}

// diagnosePhase times `kubectl mcs diagnose -A -o json` (whole process) on the clusterset that
// statusPhase grew, against the same floor as status: diagnose reads what status reads, plus a
// fixed number of small requests per member (access reviews, CRD versions, CoreDNS, the clock).
func (b *bench) diagnosePhase(ctx context.Context, res *Results) error {
	// A binary from before diagnose is measured all the same (back-to-back comparisons).
	if out, err := exec.CommandContext(ctx, b.binary, "diagnose", "--help").CombinedOutput(); err != nil {
		logf("diagnose: not in this binary (%s); skipped", strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
		return nil
	}
	var took, floor []float64
	for i := 0; i < statusRuns; i++ {
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, b.binary, "--kubeconfig", b.kubeconfig, "diagnose", "-A", "--contexts", strings.Join(b.contexts, ","), "-o", "json")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		took = append(took, time.Since(t0).Seconds())
		var rep struct {
			Summary struct{ Passed, Failed, Warnings int }
		}
		if jerr := json.Unmarshal([]byte(stdout.String()), &rep); jerr != nil {
			return fmt.Errorf("kubectl mcs diagnose -A: %v: %s", err, stderr.String())
		}
		res.DiagnoseChecks, res.DiagnoseFailed = rep.Summary.Passed+rep.Summary.Failed+rep.Summary.Warnings, rep.Summary.Failed
		d, err := b.bareLists(ctx)
		if err != nil {
			return err
		}
		floor = append(floor, d)
	}
	res.DiagnoseS, res.DiagnoseFloorS = median(took), median(floor)
	logf("diagnose -A: %.2fs (%d results, %d failed), bare lists %.2fs (medians of %d)", res.DiagnoseS, res.DiagnoseChecks, res.DiagnoseFailed, res.DiagnoseFloorS, statusRuns)
	return nil
}

// bareLists is the floor of status -A: the lists it needs (namespaces, Services, EndpointSlices,
// ServiceExports, ServiceImports) in every cluster at once, as raw responses that nothing decodes,
// protobuf where the apiserver offers it (built-in kinds), JSON for the CRDs.
func (b *bench) bareLists(ctx context.Context) (float64, error) {
	paths := []string{"/api/v1/namespaces", "/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices",
		"/apis/" + mcsapi.Group + "/" + mcsapi.V1beta1 + "/" + mcsapi.ServiceExports,
		"/apis/" + mcsapi.Group + "/" + mcsapi.V1beta1 + "/" + mcsapi.ServiceImports}
	t0 := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, m := range b.members {
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := m.raw.Get().AbsPath(p).DoRaw(ctx); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: %s: %w", m.name, p, err))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return time.Since(t0).Seconds(), errors.Join(errs...)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
