//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-mcs/kubectl-mcs/internal/promtext"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

var slicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// TestSyncWatchCachedMetrics: kubectl_mcs_cached_objects counts, per cluster and kind, what the
// members hold in the namespace sync watches, as they fill and as they empty.
func TestSyncWatchCachedMetrics(t *testing.T) {
	ns := namespace(t, "e2e-cached", members...)
	deployment(t, "member1", ns, "serve", 2)
	service(t, "member1", ns, "serve")
	w := startWatch(t, ns)
	userExport(t, "member1", ns, "serve")
	for _, c := range members {
		waitFor(t, c+": endpoints imported", func() bool { return len(importedIPs(t, c, ns, "serve", "member1")) == 2 })
	}
	cached := func(c, kind, metric string) float64 {
		v, _, err := promtext.Scrape("http://"+w.metrics+"/metrics", metric, fmt.Sprintf("cluster=%q", c), fmt.Sprintf("kind=%q", kind))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	agree := func(what string) {
		for _, c := range members {
			for kind, gvr := range map[string]schema.GroupVersionResource{"EndpointSlice": slicesGVR, "ServiceImport": siGVR("v1beta1"),
				"ServiceExport": seGVR("v1beta1"), "Service": {Version: "v1", Resource: "services"}} {
				waitFor(t, fmt.Sprintf("%s: %s: cached %ss = the apiserver's", what, c, kind), func() bool {
					return cached(c, kind, "kubectl_mcs_cached_objects") == float64(count(t, gvr, ns, c))
				})
			}
		}
	}
	agree("imported")
	if b := cached("member2", "EndpointSlice", "kubectl_mcs_cached_bytes"); b < 100 {
		t.Errorf("member2's cached EndpointSlices take %v bytes, want at least the copy's size", b)
	}
	if err := clients["member1"].dyn.Resource(seGVR("v1beta1")).Namespace(ns).Delete(context.Background(), "serve", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range members {
		waitFor(t, c+": import withdrawn", func() bool { return count(t, siGVR("v1beta1"), ns, c) == 0 })
	}
	agree("unexported")
	if n := cached("member2", "ServiceImport", "kubectl_mcs_cached_bytes"); n != 0 {
		t.Errorf("member2 holds no import, but its cached imports take %v bytes", n)
	}
}

// TestInstallMemorySizing: install (here a dry run) sizes the Deployment's memory from what the
// members hold, counts what an export adds (the export, and an import, a derived Service and
// copies in every member), and takes the flags over the rule.
func TestInstallMemorySizing(t *testing.T) {
	sizing := func(args ...string) (install.Footprint, corev1.ResourceRequirements, string) {
		t.Helper()
		r := mustMCS(t, append([]string{"install", "--contexts", allMembers, "--context", "member1", memberServers(t, "member2", "member3"), "--dry-run=client", "-o", "yaml"}, args...)...)
		var f install.Footprint
		for _, l := range strings.Split(r.stderr, "\n") {
			if rest, ok := strings.CutPrefix(l, "Memory: "); ok {
				var req, lim string
				if _, err := fmt.Sscanf(rest, "request %s limit %s for %d members, %d cached objects (%d of them sync's own) and %d endpoints", &req, &lim, &f.Members, &f.Objects, &f.Records, &f.Endpoints); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
			}
		}
		for _, o := range decodeAll(t, r.stdout) {
			if o.GetKind() != "Deployment" {
				continue
			}
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
			return f, d.Spec.Template.Spec.Containers[0].Resources, r.stderr
		}
		t.Fatalf("no Deployment printed:\n%s", r.stdout)
		return f, corev1.ResourceRequirements{}, ""
	}

	// Three Services of 3 endpoints in member1, then exported, none imported yet: the exports
	// alone add, per service, the export and in each of the three members an import, a derived
	// Service and a copy of the slice (10 objects), and no endpoint (sync caches a copy's digest).
	ns := namespace(t, "e2e-sizing", members...)
	var names []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("s%d", i)
		names = append(names, name)
		deployment(t, "member1", ns, name, 3)
		service(t, "member1", ns, name, func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": name} })
		waitFor(t, name+"'s endpoints", func() bool { return len(sourceIPs(t, "member1", ns, name)) == 3 })
	}
	// The count is of every namespace, where other tests' namespaces may still be going away:
	// each figure is taken once none is Terminating (for up to 90 s) and two reads a second
	// apart agree.
	terminating := func() int {
		n := 0
		for _, c := range members {
			l, err := clients[c].kube.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: listing namespaces: %v", c, err)
			}
			for _, x := range l.Items {
				if x.Status.Phase == corev1.NamespaceTerminating {
					n++
				}
			}
		}
		return n
	}
	settled := func() (install.Footprint, corev1.ResourceRequirements, string) {
		t.Helper()
		for end := time.Now().Add(90 * time.Second); terminating() > 0 && time.Now().Before(end); {
			time.Sleep(time.Second)
		}
		f, res, stderr := sizing()
		for i := 0; i < 60; i++ {
			time.Sleep(time.Second)
			g, gres, gerr := sizing()
			if g == f {
				return g, gres, gerr
			}
			f, res, stderr = g, gres, gerr
		}
		return f, res, stderr
	}
	before, _, _ := settled()
	for _, name := range names {
		userExport(t, "member1", ns, name)
	}
	waitFor(t, "the exports in member1", func() bool {
		after, _, _ := sizing()
		return after.Objects-before.Objects >= 3
	})
	after, res, stderr := settled()
	if d := (install.Footprint{Objects: after.Objects - before.Objects, Records: after.Records - before.Records, Endpoints: after.Endpoints - before.Endpoints}); d != (install.Footprint{Objects: 3 * 10, Records: 3 * 9}) {
		t.Errorf("the exports added %+v to the count, want {Objects:30 Records:27 Endpoints:0}\n%s", d, stderr)
	}
	req, lim := after.Memory()
	if got := res.Requests[corev1.ResourceMemory]; got.Cmp(req) != 0 {
		t.Errorf("memory request %s, want %s", got.String(), req.String())
	}
	if got := res.Limits[corev1.ResourceMemory]; got.Cmp(lim) != 0 {
		t.Errorf("memory limit %s, want %s", got.String(), lim.String())
	}

	f, res, stderr := sizing("--memory-request=700Mi", "--memory-limit=3Gi")
	if f != (install.Footprint{}) || strings.Contains(stderr, "Memory:") {
		t.Errorf("with both flags the members were counted:\n%s", stderr)
	}
	if r, l := res.Requests[corev1.ResourceMemory], res.Limits[corev1.ResourceMemory]; r.String() != "700Mi" || l.String() != "3Gi" {
		t.Errorf("with the flags: request %s, limit %s", r.String(), l.String())
	}
	if r := mcs("install", "--contexts", allMembers, "--context", "member1", "--memory-limit=lots"); r.code == 0 || !strings.Contains(r.stderr, `--memory-limit "lots"`) {
		t.Errorf("--memory-limit=lots: exit %d, %s", r.code, r.stderr)
	}
}
