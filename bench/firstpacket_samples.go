package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// packetRow is one figure: its samples through the clusterset and through the floor, in ms.
type packetRow struct {
	figure     string
	mcs, floor []float64
}

const answerTimeout = 60 * time.Second

// exposeToFirst: from `kubectl mcs expose` of a Service whose pods are Ready to the first answer
// in member2; the floor, from the creation of a plain local Service to its first answer in member1.
func (b *packetBench) exposeToFirst(ctx context.Context) ([]packetRow, error) {
	row := packetRow{figure: "expose → first answered request"}
	// Where the time goes: when member2's API holds the import's IP and the copied slice.
	imp := packetRow{figure: "  of which: expose → member2 holds the ServiceImport's IP"}
	slice := packetRow{figure: "  of which: expose → member2 holds the copied EndpointSlice"}
	for i := 0; i < b.c.samples; i++ {
		exp, loc := fmt.Sprintf("e%d", i), fmt.Sprintf("l%d", i)
		if err := b.service(ctx, exp); err != nil {
			return nil, err
		}
		if err := waitUntil(ctx, 30*time.Second, exp+"'s EndpointSlice", func() bool { return b.sliceReady(ctx, exp) }); err != nil {
			return nil, err
		}
		far, err := b.startProbe(ctx, b.consumer, "probe-"+exp, clustersetURL(exp, b.ns))
		if err != nil {
			return nil, err
		}
		near, err := b.startProbe(ctx, b.provider, "probe-"+loc, localURL(loc, b.ns))
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		seen := b.watchImport(ctx, exp)
		if out, err := exec.Command(b.c.binary, "--kubeconfig", b.c.kubeconfig, "expose", exp, "-n", b.ns,
			"--contexts", strings.Join(b.c.contexts[:2], ",")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("expose %s: %v: %s", exp, err, out)
		}
		t1 := time.Now()
		if err := b.service(ctx, loc); err != nil {
			return nil, err
		}
		any := func(string) bool { return true }
		tf, err := far.first(answerTimeout, any)
		if err != nil {
			return nil, fmt.Errorf("%s from member2: %w", exp, err)
		}
		tn, err := near.first(answerTimeout, any)
		if err != nil {
			return nil, fmt.Errorf("%s from member1: %w", loc, err)
		}
		row.mcs, row.floor = append(row.mcs, ms(tf.Sub(t0))), append(row.floor, ms(tn.Sub(t1)))
		s := <-seen
		imp.mcs, slice.mcs = append(imp.mcs, ms(s[0].Sub(t0))), append(slice.mcs, ms(s[1].Sub(t0)))
		b.deletePods(ctx, "probe-"+exp, "probe-"+loc)
	}
	return []packetRow{row, imp, slice}, nil
}

// watchImport polls member2 every 20 ms until its ServiceImport NAME has an IP and the derived
// Service has a copied slice, and sends both times.
func (b *packetBench) watchImport(ctx context.Context, name string) chan [2]time.Time {
	out := make(chan [2]time.Time, 1)
	go func() {
		var t [2]time.Time
		for deadline := time.Now().Add(answerTimeout); time.Now().Before(deadline) && (t[0].IsZero() || t[1].IsZero()); time.Sleep(20 * time.Millisecond) {
			if t[0].IsZero() {
				if svc, err := b.consumer.CoreV1().Services(b.ns).Get(ctx, "derived-"+name, metav1.GetOptions{}); err == nil && svc.Spec.ClusterIP != "" {
					t[0] = time.Now()
				}
			}
			if t[1].IsZero() {
				l, err := b.consumer.DiscoveryV1().EndpointSlices(b.ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=derived-" + name})
				if err == nil && len(l.Items) > 0 {
					t[1] = time.Now()
				}
			}
		}
		out <- t
	}()
	return out
}

// readyToFirst: a new provider pod, from its Ready to the first request it answers, and from its
// deletion to the last one it answers and to the last request that failed (routed to it gone).
func (b *packetBench) readyToFirst(ctx context.Context) ([]packetRow, error) {
	ready := packetRow{figure: "new provider pod Ready → its first answer"}
	gone := packetRow{figure: "provider pod deleted → its last answer"}
	failed := packetRow{figure: "provider pod deleted → last failed request"}
	if out, err := exec.Command(b.c.binary, "--kubeconfig", b.c.kubeconfig, "expose", "serve", "-n", b.ns,
		"--contexts", strings.Join(b.c.contexts[:2], ",")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("expose serve: %v: %s", err, out)
	}
	far, err := b.startProbe(ctx, b.consumer, "probe-far", clustersetURL("serve", b.ns))
	if err != nil {
		return nil, err
	}
	near, err := b.startProbe(ctx, b.provider, "probe-near", localURL("serve", b.ns))
	if err != nil {
		return nil, err
	}
	for _, p := range []*probe{far, near} {
		if _, err := p.first(answerTimeout, func(string) bool { return true }); err != nil {
			return nil, fmt.Errorf("serve before the samples: %w", err)
		}
	}
	for i := 0; i < b.c.samples; i++ {
		before := b.readyPods(ctx)
		if err := b.scale(ctx, 2); err != nil {
			return nil, err
		}
		var pod string
		if err := waitUntil(ctx, 60*time.Second, "a second Ready pod", func() bool {
			for p := range b.readyPods(ctx) {
				if !before[p] {
					pod = p
					return true
				}
			}
			return false
		}); err != nil {
			return nil, err
		}
		tReady := time.Now()
		isNew := func(p string) bool { return p == pod }
		for _, pr := range []struct {
			p   *probe
			row *[]float64
		}{{far, &ready.mcs}, {near, &ready.floor}} {
			t, err := pr.p.first(answerTimeout, isNew)
			if err != nil {
				return nil, fmt.Errorf("new pod %s: %w", pod, err)
			}
			*pr.row = append(*pr.row, ms(t.Sub(tReady)))
		}
		// The ReplicaSet removes the pod with the lowest deletion cost: the new one.
		patch := []byte(`{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-1000"}}}`)
		if _, err := b.provider.CoreV1().Pods(b.ns).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
		tDel := time.Now()
		if err := b.scale(ctx, 1); err != nil {
			return nil, err
		}
		for _, pr := range []struct {
			p            *probe
			last, failed *[]float64
		}{{far, &gone.mcs, &failed.mcs}, {near, &gone.floor, &failed.floor}} {
			lastAnswer, lastFail := pr.p.lastAfter(tDel, 8*time.Second, isNew)
			*pr.last = append(*pr.last, ms(lastAnswer.Sub(tDel)))
			*pr.failed = append(*pr.failed, ms(lastFail.Sub(tDel)))
		}
	}
	return []packetRow{ready, gone, failed}, nil
}

// lastAfter reads the probe for window after t0 and returns the time of the last answer from a
// matching pod and of the last failed request (t0 when there was none).
func (p *probe) lastAfter(t0 time.Time, window time.Duration, match func(string) bool) (answer, failed time.Time) {
	answer, failed = t0, t0
	for l := range p.lines {
		t := nanos(l[0])
		switch {
		case t.After(t0.Add(window)):
			return answer, failed
		case t.Before(t0):
		case l[1] == "-":
			failed = t
		case match(strings.Fields(l[1])[0]):
			answer = t
		}
	}
	return answer, failed
}

func (b *packetBench) scale(ctx context.Context, n int) error {
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
	_, err := b.provider.AppsV1().Deployments(b.ns).Patch(ctx, "serve", types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func (b *packetBench) sliceReady(ctx context.Context, svc string) bool {
	slices, err := b.provider.DiscoveryV1().EndpointSlices(b.ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return false
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}

func (b *packetBench) deletePods(ctx context.Context, names ...string) {
	for _, k := range []kubernetes.Interface{b.provider, b.consumer} {
		for _, n := range names {
			_ = k.CoreV1().Pods(b.ns).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// packetTable renders the figures, p50 and max of each path and the p50 ratio.
func packetTable(samples int, rows []packetRow) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Run of %s on real nodes: %d samples per figure; a request every 20 ms from a probe pod.\n\n", time.Now().UTC().Format("2006-01-02"), samples)
	s.WriteString("| figure | kubectl mcs: member2 → member1, clusterset name (p50 / max) | floor: member1, plain local Service (p50 / max) | p50 ratio |\n|---|---|---|---|\n")
	cell := func(xs []float64) string {
		switch {
		case len(xs) == 0:
			return ""
		case percentile(xs, 100) == 0:
			return "none"
		}
		return fmt.Sprintf("%.0f / %.0f ms", percentile(xs, 50), percentile(xs, 100))
	}
	for _, r := range rows {
		m50, f50 := percentile(r.mcs, 50), percentile(r.floor, 50)
		x := ""
		if f50 > 0 {
			x = fmt.Sprintf("%.2fx", m50/f50)
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %s |\n", r.figure, cell(r.mcs), cell(r.floor), x)
	}
	return s.String()
}
