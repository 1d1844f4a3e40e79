package main

// The measured change of bench -karmada, the churn beside it, and the wait for both paths to
// catch up afterwards.

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// sample adds an endpoint (prefix.X.Y, new for every sample) to service i's source slice in the
// provider's namespace nsName and returns the time until the consumer's watch seen delivers a
// slice holding it.
func (k *karmadaBench) sample(ctx context.Context, sources map[string]*discoveryv1.EndpointSlice, nsName string, seen *seer, i int, prefix string) (float64, error) {
	name := svcName(i)
	ip := fmt.Sprintf("%s.%d.%d", prefix, k.taken/250%250, k.taken%250+1)
	ch := seen.await(ip)
	var t0 time.Time
	var updated *discoveryv1.EndpointSlice
	for read := false; ; read = true {
		src := sources[name].DeepCopy()
		src.Endpoints = append(src.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		t0 = time.Now()
		var err error
		updated, err = k.provider.fast.DiscoveryV1().EndpointSlices(nsName).Update(ctx, src, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && !read {
			// The churn of a smaller size changed it (the churned services of one size are
			// among the sampled ones of the next): read it again, then time the update.
			if sources[name], err = k.provider.fast.DiscoveryV1().EndpointSlices(nsName).Get(ctx, src.Name, metav1.GetOptions{}); err == nil {
				continue
			}
		}
		if err != nil {
			return 0, fmt.Errorf("%s: updating slice %s/%s: %w", k.provider.name, nsName, src.Name, err)
		}
		break
	}
	sources[name] = updated
	t1, err := await(ch, fmt.Sprintf("%s: address %s of %s/%s", k.consumer.name, ip, nsName, name))
	return float64(t1.Sub(t0).Microseconds()) / 1000, err
}

// churnPath is one path's share of the churn: its namespace, the exporter index of its source
// addresses (address()), and the prefix of the addresses the churn writes.
type churnPath struct {
	ns       string
	exporter int
	prefix   string
}

var churnPaths = []churnPath{{ns, 0, "10.251"}, {karmadaNS, 2, "10.248"}}

// startChurn changes, churnRate times a second, one endpoint of the source slice of service
// first, first+1, ... (round robin up to services) on both paths, until the returned stop is
// called; stop says how many changes a second each path got.
func (k *karmadaBench) startChurn(ctx context.Context, first, services int) (stop func() (float64, error)) {
	cctx, cancel := context.WithCancel(ctx)
	var changes, failed atomic.Int64
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, k.churned = paced(cctx, k.churnRate, 8, k.churned, 0, func(n int) {
			i := first + n%max(1, services-first)
			for _, p := range churnPaths {
				addr := fmt.Sprintf("%s.%d.%d", p.prefix, n/250%250, n%250+1)
				body := fmt.Sprintf(`{"endpoints":[{"addresses":[%q],"conditions":{"ready":true}},{"addresses":[%q],"conditions":{"ready":true}}]}`,
					addr, address(p.exporter, i, 1))
				_, err := k.provider.fast.DiscoveryV1().EndpointSlices(p.ns).Patch(cctx, svcName(i)+"-src", types.MergePatchType, []byte(body), metav1.PatchOptions{})
				switch {
				case err == nil:
					changes.Add(1)
				case cctx.Err() == nil:
					failed.Add(1)
				}
			}
		})
	}()
	return func() (float64, error) {
		cancel()
		<-done
		rate := float64(changes.Load()) / float64(len(churnPaths)) / time.Since(t0).Seconds()
		if n := failed.Load(); n > 0 {
			return rate, fmt.Errorf("churn: %d of its changes failed", n)
		}
		return rate, nil
	}
}

// drain waits until sync's queue is empty and idle, and the consumer's copy of every source
// slice of the Karmada path holds the source's addresses, so that the next phase starts on quiet
// paths. (The last change the churn asked of a service need not be the last applied: two of its
// writes may be in flight at once.)
func (k *karmadaBench) drain(ctx context.Context) error {
	if _, err := k.quiet(ctx); err != nil {
		return err
	}
	t0, pending := time.Now(), 0
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := k.provider.fast.DiscoveryV1().EndpointSlices(karmadaNS).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelManagedBy + "=bench.kubectl-mcs.io"})
		if err != nil {
			return false, nil
		}
		pending = 0
		for i := range l.Items {
			src := &l.Items[i]
			o, ok, _ := k.karmadaSeen.store.GetByKey(karmadaNS + "/" + k.provider.name + "-" + src.Name)
			if !ok || !slices.Equal(sorted(sliceAddresses(src)), sorted(sliceAddresses(o))) {
				pending++
			}
		}
		return pending == 0, nil
	})
	if err != nil {
		return fmt.Errorf("Karmada: %d services' copies in %s still differ from their source after 10m", pending, k.consumer.name)
	}
	logf("Karmada caught up %.1f s after the phase", time.Since(t0).Seconds())
	return nil
}

func sorted(xs []string) []string {
	slices.Sort(xs)
	return xs
}
