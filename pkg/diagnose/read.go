package diagnose

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// aboutGroup holds ClusterProperty (KEP-2149).
const aboutGroup = "about.k8s.io"

// Read reads every member: what status reads (member.Read), and, concurrently, what
// only diagnose needs. It only reads (SelfSubjectAccessReviews are answered, never stored).
func Read(ctx context.Context, members []*clusterset.Connection, ns, service string, chunk int64) []Cluster {
	out := make([]Cluster, len(members))
	var wg sync.WaitGroup
	eachReachable := func(f func(i int, m *clusterset.Connection)) {
		for i, m := range members {
			if m.Err != nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(i, m)
			}()
		}
	}
	// ClusterProperties first: every member is read under the ID the other commands give it.
	eachReachable(func(i int, m *clusterset.Connection) { out[i].ClusterProperties = clusterProperties(ctx, m) })
	wg.Wait()
	adoptIDs(members, out)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, c := range member.Read(ctx, members, ns, service, chunk) {
			out[i].Cluster = c
		}
	}()
	eachReachable(func(i int, m *clusterset.Connection) { readExtras(ctx, m, ns, &out[i]) })
	wg.Wait()
	return out
}

// adoptIDs gives a member the ID its ClusterProperty says, as every other command does (a CTX=ID
// that disagrees, or an invalid ID, stays unadopted: the cluster-id check fails it). Members that
// would end with the same ID keep the ones they have, so that each cluster has a name of its own
// in the report and the check reports the clash under both.
func adoptIDs(members []*clusterset.Connection, read []Cluster) {
	final := make([]clusterset.Ref, len(members))
	count := map[string]int{}
	for i, m := range members {
		try := clusterset.Connection{Ref: m.Ref}
		_ = try.AdoptID(read[i].ClusterProperties[PropertyClusterID])
		final[i] = try.Ref
		count[try.ID]++
	}
	for i, m := range members {
		if count[final[i].ID] == 1 {
			m.Ref = final[i]
		}
	}
}

// readExtras fills in everything but the embedded snapshot.Cluster, each read concurrently.
func readExtras(ctx context.Context, m *clusterset.Connection, ns string, into *Cluster) {
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	run(func() { into.ServedVersions = servedVersions(m) })
	run(func() {
		if n, err := m.Client.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err == nil {
			into.SystemUID = string(n.UID)
		}
	})
	run(func() { into.Access, into.AccessAs, into.AccessErr = accessReviews(ctx, m, ns) })
	run(func() {
		cm, err := m.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			into.CoreDNSErr = err.Error()
		default:
			into.CoreDNS = cm
		}
	})
	run(func() { into.DNSServer, into.DNSServerSlices, into.DNSServerErr = dnsServer(ctx, m) })
	run(func() { into.ClockOffset, into.ClockError = clockOffset(ctx, m.Config) })
	wg.Wait()
}

// dnsServer reads the DNS server's Service and, when it exists, its EndpointSlices.
func dnsServer(ctx context.Context, m *clusterset.Connection) (*corev1.Service, []discoveryv1.EndpointSlice, string) {
	svc, err := m.Client.CoreV1().Services(names.SystemNamespace).Get(ctx, names.DNSServerName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, ""
	case err != nil:
		return nil, nil, err.Error()
	}
	l, err := m.Client.DiscoveryV1().EndpointSlices(names.SystemNamespace).List(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + names.DNSServerName})
	if err != nil {
		return svc, nil, err.Error()
	}
	return svc, l.Items, ""
}

// servedVersions are the multicluster.x-k8s.io versions that serve both kinds, newest first.
func servedVersions(m *clusterset.Connection) []string {
	var out []string
	for _, v := range []string{mcsapi.V1beta1, mcsapi.V1alpha1} {
		rl, err := m.Discovery.ServerResourcesForGroupVersion(mcsapi.Group + "/" + v)
		if err != nil {
			continue
		}
		n := 0
		for _, r := range rl.APIResources {
			if r.Name == mcsapi.ServiceExports || r.Name == mcsapi.ServiceImports {
				n++
			}
		}
		if n == 2 {
			out = append(out, v)
		}
	}
	return out
}

// clusterProperties reads the ClusterProperties in the group's preferred version; nil when the
// group is not served or cannot be read.
func clusterProperties(ctx context.Context, m *clusterset.Connection) map[string]string {
	groups, err := m.Discovery.ServerGroups()
	if err != nil {
		return nil
	}
	for _, g := range groups.Groups {
		if g.Name != aboutGroup {
			continue
		}
		gvr := schema.GroupVersionResource{Group: aboutGroup, Version: g.PreferredVersion.Version, Resource: "clusterproperties"}
		l, err := m.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		out := map[string]string{}
		for _, p := range l.Items {
			v, _, _ := unstructured.NestedString(p.Object, "spec", "value")
			out[p.GetName()] = v
		}
		return out
	}
	return nil
}

// clockOffset is the apiserver's clock minus ours, from the Date header of a /version request
// compared with the middle of the request, half a second added for the header's truncation to the
// second, and its error (half the round trip); of three requests, the quickest; nil when unknown.
func clockOffset(ctx context.Context, cfg *rest.Config) (*time.Duration, time.Duration) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, 0
	}
	var best *time.Duration
	var bestErr time.Duration
	for try := 0; try < 3; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/version", nil)
		if err != nil {
			return nil, 0
		}
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			break
		}
		end := time.Now()
		_ = resp.Body.Close()
		date, err := http.ParseTime(resp.Header.Get("Date"))
		if err != nil {
			break
		}
		d, e := date.Add(500*time.Millisecond).Sub(start.Add(end.Sub(start)/2)), end.Sub(start)/2
		if best == nil || e < bestErr {
			best, bestErr = &d, e
		}
	}
	return best, bestErr
}

// ReadKarmada reads a Karmada control plane as status --karmada does.
func ReadKarmada(ctx context.Context, name string, cfg *rest.Config, ns string, chunk int64) *Karmada {
	k := &Karmada{Context: name}
	cp, err := member.ConnectControlPlane(name, cfg, nil)
	if err != nil {
		k.Err = err.Error()
		return k
	}
	in, err := cp.Read(ctx, ns, chunk)
	if err != nil {
		k.Err = err.Error()
		return k
	}
	k.Status = status.BuildKarmada(in)
	return k
}
