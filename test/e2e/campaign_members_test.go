//go:build e2e

package e2e

// What the fault campaign reads back from the members: their own pods and EndpointSlices settled
// (the final state to expect), and every member compared with it (campaign_state_test.go).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// waitForSources waits until every Deployment the campaign left runs exactly its replicas and
// the member's own EndpointSlices show exactly those pods, and returns the final state.
func (c *campaign) waitForSources(timeout time.Duration) []wantService {
	c.t.Helper()
	var want []wantService
	var why string
	lastLog := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if why != "" && time.Since(lastLog) > 15*time.Second {
			c.logf("waiting for the members' own pods and EndpointSlices: %s", why)
			lastLog = time.Now()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		want, why = nil, ""
		for _, s := range c.svcs {
			w := wantService{Name: s.name, Port: s.port, TargetPort: s.port + 8000, Exports: map[string]*wantSource{}}
			for _, m := range sortedKeys(s.in) {
				in := s.in[m]
				if !in.export {
					continue
				}
				if !in.service {
					w.Exports[m] = nil
					continue
				}
				ips, n, err := sourceState(m, c.ns, s.name)
				if err != nil {
					why = err.Error()
					return false, nil
				}
				if pods := podIPs(c.t, m, c.ns, s.name); len(pods) != int(in.replicas) || strings.Join(pods, ",") != strings.Join(ips, ",") {
					why = fmt.Sprintf("%s/%s: %d replicas wanted, pods %v, EndpointSlices %v", m, s.name, in.replicas, pods, ips)
					return false, nil
				}
				if all, _ := allPods(m, c.ns, s.name); all != int(in.replicas) {
					why = fmt.Sprintf("%s/%s: %d pods, %d replicas wanted", m, s.name, all, in.replicas)
					return false, nil
				}
				w.Exports[m] = &wantSource{IPs: ips, Slices: n}
			}
			want = append(want, w)
		}
		return true, nil
	})
	if err != nil {
		c.t.Fatalf("the members' own pods and EndpointSlices did not settle in %v: %s", timeout, why)
	}
	return want
}

// sourceState is every address (ready or not) of a Service's own EndpointSlices and how many
// there are; it errs while some address is not ready.
func sourceState(m, ns, svc string) ([]string, int, error) {
	l, err := clients[m].kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: lblKubeService + "=" + svc})
	if err != nil {
		return nil, 0, err
	}
	var ips []string
	n := 0
	for _, s := range l.Items {
		if s.Labels[lblSliceManagedBy] == managedValue {
			continue
		}
		n++
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				return nil, 0, fmt.Errorf("%s/%s: endpoint %v not ready", m, svc, e.Addresses)
			}
			ips = append(ips, e.Addresses...)
		}
	}
	sort.Strings(ips)
	return ips, n, nil
}

func allPods(m, ns, app string) (int, error) {
	l, err := clients[m].kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// check compares every member with the final state want, returning the differences.
func (c *campaign) check(want []wantService) []string {
	c.t.Helper()
	var got []string
	for _, m := range members {
		o, err := readMember(m, c.ns)
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", m, err)}
		}
		got = append(got, observedLines(m, o)...)
	}
	exp := expectedLines(members, want)
	c.stats.FinalLines, c.stats.FinalMembers = len(exp), len(members)
	return diffLines(exp, got)
}

func readMember(m, ns string) (memberObjects, error) {
	ctx, cl := context.Background(), clients[m]
	var o memberObjects
	for _, k := range []struct {
		gvrVersion string
		imports    bool
	}{{"v1beta1", true}, {"v1beta1", false}} {
		gvr := seGVR(k.gvrVersion)
		if k.imports {
			gvr = siGVR(k.gvrVersion)
		}
		l, err := cl.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return o, err
		}
		for _, u := range l.Items {
			if k.imports {
				var si mcsv1beta1.ServiceImport
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &si); err != nil {
					return o, err
				}
				o.Imports = append(o.Imports, si)
			} else {
				var se mcsv1beta1.ServiceExport
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &se); err != nil {
					return o, err
				}
				o.Exports = append(o.Exports, se)
			}
		}
	}
	svcs, err := cl.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return o, err
	}
	o.Services = svcs.Items
	slices, err := cl.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return o, err
	}
	o.Slices = slices.Items
	return o, nil
}

// selfCheck: against the converged members, a final state that differs in one fact must fail.
func (c *campaign) selfCheck(want []wantService) {
	c.t.Helper()
	breakOne := map[string]func([]wantService) []wantService{
		"an exporter missing": func(w []wantService) []wantService {
			for i, s := range w {
				if ex := s.exporters(); len(ex) > 0 {
					w[i].Exports = copyExports(s.Exports)
					delete(w[i].Exports, ex[0])
					return w
				}
			}
			return nil
		},
		"another port": func(w []wantService) []wantService {
			for i, s := range w {
				if len(s.exporters()) > 0 {
					w[i].Port++
					return w
				}
			}
			return nil
		},
		"an address fewer": func(w []wantService) []wantService {
			for i, s := range w {
				for _, m := range s.exporters() {
					if len(s.Exports[m].IPs) > 0 {
						w[i].Exports = copyExports(s.Exports)
						w[i].Exports[m] = &wantSource{IPs: s.Exports[m].IPs[1:], Slices: s.Exports[m].Slices}
						return w
					}
				}
			}
			return nil
		},
	}
	for name, f := range breakOne {
		w := f(append([]wantService{}, want...))
		if w == nil {
			continue
		}
		if d := c.check(w); len(d) == 0 {
			c.t.Errorf("checker self-check: a final state with %s matched the members", name)
		}
	}
}

func copyExports(in map[string]*wantSource) map[string]*wantSource {
	out := map[string]*wantSource{}
	for k, v := range in {
		out[k] = v
	}
	return out
}
