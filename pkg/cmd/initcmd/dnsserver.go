package initcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// notYet is a DNS server Service that may still come: absent, or without a ready endpoint.
type notYet struct{ error }

// dnsService is the address of member m's DNS server: the ClusterIP of the Service that
// `dns-server --print-manifests` creates, port 53. A Service without a ready endpoint is refused
// as a missing one is: CoreDNS would forward the zone to nothing, and every clusterset lookup
// would get SERVFAIL. Until deadline (--dns-wait; zero: no waiting) it waits for both.
func (f *DNSFlags) dnsService(ctx context.Context, m *clusterset.Connection, deadline time.Time) (corefile.Upstream, error) {
	up, err := f.dnsServiceNow(ctx, m)
	if f.Wait == 0 || !errors.As(err, new(notYet)) {
		return up, err
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	_ = wait.PollUntilContextCancel(wctx, time.Second, false, func(ctx context.Context) (bool, error) {
		u, e := f.dnsServiceNow(ctx, m)
		if wctx.Err() != nil { // the deadline passed during the reads: keep the last answer
			return true, nil
		}
		up, err = u, e
		return !errors.As(err, new(notYet)), nil
	})
	return up, err
}

// dnsServiceNow reads the Service and its EndpointSlices once.
func (f *DNSFlags) dnsServiceNow(ctx context.Context, m *clusterset.Connection) (corefile.Upstream, error) {
	ref := fmt.Sprintf("cluster %q: service %s/%s", m.ID, names.SystemNamespace, names.DNSServerName)
	apply := shell.Block(shell.MCS("dns-server", "--print-manifests", "--context", m.Context).Pipe("kubectl", "--context", m.Context, "apply", "-f", "-"))
	waited := ""
	if f.Wait > 0 {
		waited = " after " + f.Wait.String()
	}
	svc, err := m.Client.CoreV1().Services(names.SystemNamespace).Get(ctx, names.DNSServerName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return corefile.Upstream{}, notYet{fmt.Errorf("%s not found%s: --dns forwards the clusterset zone to it; pass --dns-server=IP[:PORT], or run the DNS server there:%s", ref, waited, apply)}
	}
	if err != nil {
		return corefile.Upstream{}, fmt.Errorf("%s: %w", ref, err)
	}
	ip := svc.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		return corefile.Upstream{}, fmt.Errorf("%s has no cluster IP for CoreDNS to forward to; pass --dns-server=IP[:PORT], or run the DNS server there:%s", ref, apply)
	}
	slices, err := m.Client.DiscoveryV1().EndpointSlices(names.SystemNamespace).List(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + names.DNSServerName})
	if err != nil {
		return corefile.Upstream{}, fmt.Errorf("%s: reading its endpointslices: %w", ref, err)
	}
	if !anyReady(slices.Items) {
		see := "wait for one with --dns-wait=DURATION, or see why its pods are not ready"
		if f.Wait > 0 {
			see = "see why its pods are not ready"
		}
		return corefile.Upstream{}, notYet{fmt.Errorf("%s has no ready endpoint%s: CoreDNS would forward the clusterset zone to it and every clusterset lookup would fail (SERVFAIL); %s:%s",
			ref, waited, see, shell.Block(shell.Kubectl("--context", m.Context, "-n", names.SystemNamespace, "get", "pods", "-l", "app.kubernetes.io/name="+names.DNSServerName)))}
	}
	return corefile.Upstream{Addr: net.JoinHostPort(ip, "53"), Service: names.SystemNamespace + "/" + names.DNSServerName}, nil
}

// anyReady: an endpoint is ready when conditions.ready is true or unset, as the API says.
func anyReady(slices []discoveryv1.EndpointSlice) bool {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}
