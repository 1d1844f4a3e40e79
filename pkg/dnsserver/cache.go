package dnsserver

import (
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// kinds are all the DNS server caches: the ServiceImports (in the version the member serves,
// typed by decode.Transform) and, of the EndpointSlices, only those labelled
// endpointslice.kubernetes.io/managed-by=kubectl-mcs (sliceSelector), sync's copies.
var (
	kinds         = []string{snapshot.KindServiceImport, snapshot.KindEndpointSlice}
	sliceSelector = names.EndpointSliceManagedByLabel + "=" + names.EndpointSliceManagedByValue
)

// caches are the member's caches as pkg/member keeps them: they hold the last state while the
// apiserver is away. It is the dnszone.Source of the server.
type caches struct{ m *member.Cache }

// Import is the ServiceImport NS/NAME; one that does not decode is not served (and logged at -v=2).
func (c caches) Import(namespace, name string) *mcsv1beta1.ServiceImport {
	si, err := c.m.Import(namespace, name)
	if err != nil {
		klog.V(2).InfoS("ServiceImport not served", "namespace", namespace, "name", name, "err", err)
		return nil
	}
	return si
}

func (c caches) HasImports(namespace string) bool { return c.m.HasImports(namespace) }

func (c caches) Slices(namespace, name string) []*discoveryv1.EndpointSlice {
	return c.m.CopiesOf(namespace, name)
}

// String names the caches' contents in the log.
func (c caches) String() string {
	return fmt.Sprintf("%d ServiceImports, %d EndpointSlices", c.m.Held(snapshot.KindServiceImport), c.m.Held(snapshot.KindEndpointSlice))
}
