//go:build e2e

package reconciler

// sync's caches hold the slices it copied as metadata and a digest: a copy somebody else changed
// (its endpoints, its ports) is seen to differ and written back, with nothing but the digest to
// compare. Run by `make test-e2e`.

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func TestCopyChangedByAnotherIsWrittenBack(t *testing.T) {
	m1, m2 := realMember(t, "member1"), realMember(t, "member2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "e2e-digest-" + utilrand.String(5)
	for _, m := range []*clusterset.Connection{m1, m2} {
		servesMCS(t, m)
		if _, err := m.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	// member1 exports web, a selectorless Service whose one slice the test writes.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	if _, err := m1.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	yes, port := true, int32(8080)
	src := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: &port}}}
	if _, err := m1.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, src, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	se := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mcsapi.Group + "/" + mcsapi.V1beta1, "kind": "ServiceExport",
		"metadata": map[string]any{"name": "web", "namespace": ns}}}
	if _, err := m1.Dynamic.Resource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).Namespace(ns).Create(ctx, se, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	r := New([]*clusterset.Connection{m1, m2}, Options{Namespace: ns, OnChanges: func([]Change) {}})
	r.Start(ctx)
	r.WaitForSync(ctx, 30*time.Second)
	go r.Run(ctx, 2)

	copyOf := func() (*discoveryv1.EndpointSlice, error) {
		l, err := m2.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: mcsv1beta1.LabelServiceName + "=web"})
		if err != nil || len(l.Items) != 1 {
			return nil, err
		}
		return &l.Items[0], nil
	}
	written := func(what string) *discoveryv1.EndpointSlice {
		t.Helper()
		var c *discoveryv1.EndpointSlice
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			c, _ = copyOf()
			return c != nil && len(c.Endpoints) == 1 && len(c.Endpoints[0].Addresses) == 1 && c.Endpoints[0].Addresses[0] == "10.1.0.1" &&
				c.Endpoints[0].Conditions.Ready != nil && *c.Endpoints[0].Conditions.Ready &&
				len(c.Ports) == 1 && c.Ports[0].Port != nil && *c.Ports[0].Port == 8080, nil
		})
		if err != nil {
			t.Fatalf("%s: member2's copy of web is %+v; want member1's endpoint 10.1.0.1 on port 8080", what, c)
		}
		return c
	}
	c := written("after the export")

	// What sync holds of it: the metadata and the digest, no endpoint.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, s := range r.clusters[1].SlicesOf(ns, "web") {
			if s.Name == c.Name {
				return snapshot.Digested(s) && s.Endpoints == nil && snapshot.SliceDigest(s) == snapshot.SliceDigest(c), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("member2's cache does not hold the copy %s as its digest", c.Name)
	}

	for _, change := range []struct{ what, patch string }{
		{"another's address", `{"endpoints":[{"addresses":["10.9.9.9"],"conditions":{"ready":true}}]}`},
		{"another's port", `{"ports":[{"name":"http","port":9999}]}`},
		{"another's condition", `{"endpoints":[{"addresses":["10.1.0.1"],"conditions":{"ready":false}}]}`},
	} {
		if _, err := m2.Client.DiscoveryV1().EndpointSlices(ns).Patch(ctx, c.Name, types.MergePatchType, []byte(change.patch), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatalf("%s: %v", change.what, err)
		}
		written(change.what)
	}
}
