//go:build e2e

package reconciler

// The write path against a real apiserver, with a cache that has not shown the objects a user
// made: nothing of theirs is taken over, changed or deleted. Run by `make test-e2e`.

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

func realMember(t *testing.T, ctxName string) *clusterset.Connection {
	t.Helper()
	kc := os.Getenv("E2E_KUBECONFIG")
	if kc == "" {
		t.Skip("E2E_KUBECONFIG not set (run: make test-e2e)")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kc},
		&clientcmd.ConfigOverrides{CurrentContext: ctxName}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	m := &clusterset.Connection{Ref: clusterset.Ref{Context: ctxName, ID: ctxName}, Config: cfg}
	m.Client = kubernetes.NewForConfigOrDie(cfg)
	m.Dynamic = dynamic.NewForConfigOrDie(cfg)
	m.Discovery = m.Client.Discovery()
	return m
}

// servesMCS installs the mcs-api CRDs in m where they are missing (this package's tests may run
// before test/e2e's setup does), and waits until ServiceExports can be listed.
func servesMCS(t *testing.T, m *clusterset.Connection) {
	t.Helper()
	ctx := context.Background()
	crds, err := mcsapi.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if _, err := m.Dynamic.Resource(mcsapi.CRDResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("cluster %q: CRD %s: %v", m.Context, crd.GetName(), err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := m.Dynamic.Resource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("cluster %q: ServiceExports are not served", m.Context)
	}
}

// joinedReconciler is a reconciler over cm alone, joined: its writes see cm's served mcs-api.
func joinedReconciler(t *testing.T, cm *clusterset.Connection) *Reconciler {
	t.Helper()
	r := New([]*clusterset.Connection{cm}, Options{})
	joined, err := member.Joined(cm, mcsapi.V1beta1)
	if err != nil {
		t.Fatal(err)
	}
	r.clusters[0].Cache = joined
	return r
}

// realMemberNamespace is member2 and a fresh namespace there, removed when the test ends.
func realMemberNamespace(t *testing.T, prefix string) (*clusterset.Connection, string) {
	t.Helper()
	cm := realMember(t, "member2")
	ctx := context.Background()
	ns := prefix + utilrand.String(5)
	if _, err := cm.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cm.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	return cm, ns
}

func TestWritesNeverTakeOver(t *testing.T) {
	cm, ns := realMemberNamespace(t, "e2e-takeover-")
	ctx := context.Background()

	// The user's objects, under the names sync would use for service "web".
	userSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := cm.Client.CoreV1().Services(ns).Create(ctx, userSvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	userImp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec":     map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}}}}
	gvrSI := mcsapi.GVR("v1beta1", mcsapi.ServiceImports)
	if _, err := cm.Dynamic.Resource(gvrSI).Namespace(ns).Create(ctx, userImp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	userSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-member1-abc", Namespace: ns,
		Labels: map[string]string{discoveryv1.LabelServiceName: "mine"}}, AddressType: discoveryv1.AddressTypeIPv4}
	if _, err := cm.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, userSlice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	r := joinedReconciler(t, cm)
	// What a stale cache saw: nothing for the creates; for the update and the delete, objects of
	// ours with the same names that were since replaced by the user's.
	managed := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "web"}
	staleSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-web", Namespace: ns, UID: "1d0f7e7e-0000-4000-8000-000000000001", Labels: managed}}
	staleSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-member1-abc", Namespace: ns,
		UID: "1d0f7e7e-0000-4000-8000-000000000002", Labels: managed}}
	obs := engine.Observed{Clusters: []engine.ObservedCluster{{ID: "member2", Reachable: true, Objects: snapshot.Objects{Namespaces: []string{ns},
		Services: []*corev1.Service{staleSvc}, EndpointSlices: []*discoveryv1.EndpointSlice{staleSlice}}}}}

	wantImp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns,
		Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}, Annotations: map[string]string{names.DerivedServiceAnnotation: "derived-web"}},
		Spec: mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, Ports: []mcsv1beta1.ServicePort{{Port: 81, Protocol: corev1.ProtocolTCP}}}}
	wantSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-web", Namespace: ns, Labels: managed},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 81, Protocol: corev1.ProtocolTCP}}}}
	for _, tc := range []struct {
		a    engine.Action
		want string
	}{
		{engine.Action{Cluster: "member2", Kind: snapshot.KindServiceImport, Namespace: ns, Name: "web", Verb: engine.VerbCreate, Object: wantImp}, "exists already"},
		{engine.Action{Cluster: "member2", Kind: snapshot.KindService, Namespace: ns, Name: "derived-web", Verb: engine.VerbCreate, Object: wantSvc}, "exists already"},
		{engine.Action{Cluster: "member2", Kind: snapshot.KindService, Namespace: ns, Name: "derived-web", Verb: engine.VerbUpdate, Object: wantSvc}, "replaced by another object"},
		{engine.Action{Cluster: "member2", Kind: snapshot.KindEndpointSlice, Namespace: ns, Name: "derived-web-member1-abc", Verb: engine.VerbUpdate, Object: staleSlice}, "replaced by another object"},
		{engine.Action{Cluster: "member2", Kind: snapshot.KindEndpointSlice, Namespace: ns, Name: "derived-web-member1-gone", Verb: engine.VerbUpdate,
			Object: &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-member1-gone", Namespace: ns, UID: staleSlice.UID, Labels: managed}}}, "replaced by another object"},
		{engine.Action{Cluster: "member2", Kind: snapshot.KindEndpointSlice, Namespace: ns, Name: "derived-web-member1-abc", Verb: engine.VerbDelete}, ""},
	} {
		err := r.execute(ctx, obs, tc.a)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s: error %v, want one saying %q", tc.a.Verb, tc.a.Kind, err, tc.want)
		}
	}

	// The user's objects are as they made them: no label of ours, no field owned by us, there.
	svc, err := cm.Client.CoreV1().Services(ns).Get(ctx, "derived-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := cm.Dynamic.Resource(gvrSI).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := cm.Client.DiscoveryV1().EndpointSlices(ns).Get(ctx, "derived-web-member1-abc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the user's EndpointSlice was deleted: %v", err)
	}
	for what, o := range map[string]metav1.Object{"Service": svc, "ServiceImport": imp, "EndpointSlice": sl} {
		if names.IsManaged(o.GetLabels()) {
			t.Errorf("user's %s taken over: labels %v", what, o.GetLabels())
		}
		for _, mf := range o.GetManagedFields() {
			if mf.Manager == names.FieldManager {
				t.Errorf("user's %s: fields now owned by %s", what, mf.Manager)
			}
		}
	}
	if svc.Spec.Ports[0].Port != 80 {
		t.Errorf("user's Service changed: ports %v", svc.Spec.Ports)
	}
}

// The caches keep the other managers' managedFields entries as stubs (member.Trim). The first
// apply after our create hands the create's fields to the apply manager: in place when the cached
// entries say where ours is, else with a patch made from the object read live; either way every
// other manager's entry stays, and the apply that follows removes what we no longer want. A cache
// that is wrong about where the entry is makes the apiserver refuse the in-place patch, and the
// hand-over reads the object instead.
func TestFirstApplyAfterCreateFromTrimmedCache(t *testing.T) {
	cm, ns := realMemberNamespace(t, "e2e-handover-")
	ctx := context.Background()
	r := joinedReconciler(t, cm)

	for _, tc := range []struct {
		name  string
		stale bool // the cached entries are not where the server has them
	}{{"derived-web", false}, {"derived-web-stale", true}} {
		managed := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "web", "ours-once": "x"}
		want := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: ns, Labels: managed},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "b", Port: 81, Protocol: corev1.ProtocolTCP}}}}
		create := engine.Action{Cluster: "member2", Kind: snapshot.KindService, Namespace: ns, Name: tc.name, Verb: engine.VerbCreate, Object: want}
		if err := r.execute(ctx, engine.Observed{}, create); err != nil {
			t.Fatal(err)
		}
		// Somebody else annotates it, with a field manager of their own.
		if _, err := cm.Client.CoreV1().Services(ns).Patch(ctx, tc.name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"team":"blue"}}}`),
			metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatal(err)
		}
		cached, err := cm.Client.CoreV1().Services(ns).Get(ctx, tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		member.Trim(cached, names.FieldManager)
		if tc.stale {
			cached.ManagedFields = append([]metav1.ManagedFieldsEntry{{Manager: "gone", Operation: metav1.ManagedFieldsOperationUpdate}}, cached.ManagedFields...)
		}
		if handOverInPlace(cached, names.FieldManager) == nil {
			t.Fatalf("%s: no in-place hand-over for a create's only entry: %+v", tc.name, cached.ManagedFields)
		}
		obs := engine.Observed{Clusters: []engine.ObservedCluster{{ID: "member2", Reachable: true, Objects: snapshot.Objects{Namespaces: []string{ns},
			Services: []*corev1.Service{cached}}}}}

		update := want.DeepCopy()
		delete(update.Labels, "ours-once")
		update.Spec.Ports = update.Spec.Ports[:1]
		if err := r.execute(ctx, obs, engine.Action{Cluster: "member2", Kind: snapshot.KindService, Namespace: ns, Name: tc.name, Verb: engine.VerbUpdate, Object: update}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		live, err := cm.Client.CoreV1().Services(ns).Get(ctx, tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(live.Spec.Ports) != 1 || live.Labels["ours-once"] != "" {
			t.Errorf("%s after the apply: ports %v, labels %v; want port b and label ours-once gone", tc.name, live.Spec.Ports, live.Labels)
		}
		var theirs, ourUpdate bool
		for _, e := range live.ManagedFields {
			theirs = theirs || e.Manager == "someone-else"
			ourUpdate = ourUpdate || e.Manager == names.FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == ""
		}
		if live.Annotations["team"] != "blue" || !theirs || ourUpdate {
			t.Errorf("%s: want someone-else's annotation and entry kept and no Update entry of ours: annotations %v, managedFields %+v", tc.name, live.Annotations, live.ManagedFields)
		}
	}
}

// An EndpointSlice update (a merge patch, slicePatch) does what an apply would: the labels we no
// longer want go, somebody else's label, annotation and owner stay, the replaced derived Service
// gives way to the new one as controller, and nobody else's managedFields entry is lost.
func TestSliceUpdateKeepsOthers(t *testing.T) {
	cm, ns := realMemberNamespace(t, "e2e-slicepatch-")
	ctx := context.Background()
	r := joinedReconciler(t, cm)
	yes := true
	owner := func(name string) metav1.OwnerReference {
		s, err := cm.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: name, UID: s.UID, Controller: &yes}
	}
	oldOwner, newOwner := owner("derived-old"), owner("derived-new")
	theirOwner := owner("their-owner")
	theirOwner.Controller = nil

	managed := map[string]string{names.ManagedByLabel: names.ManagedByValue, discoveryv1.LabelManagedBy: names.ManagedByValue}
	ready := true
	slice := func(labels map[string]string, o metav1.OwnerReference, ip string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "derived-web-member1", Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{o}}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
	}
	first := map[string]string{"ours-once": "x"}
	for k, v := range managed {
		first[k] = v
	}
	a := engine.Action{Cluster: "member2", Kind: snapshot.KindEndpointSlice, Namespace: ns, Name: "derived-web-member1", Verb: engine.VerbCreate,
		Object: slice(first, oldOwner, "10.0.0.1")}
	if err := r.execute(ctx, engine.Observed{}, a); err != nil {
		t.Fatal(err)
	}
	theirs, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"team": "blue"},
		"annotations": map[string]string{"note": "theirs"}, "ownerReferences": []metav1.OwnerReference{oldOwner, theirOwner}}})
	if _, err := cm.Client.DiscoveryV1().EndpointSlices(ns).Patch(ctx, a.Name, types.MergePatchType, theirs, metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	cached, err := cm.Client.DiscoveryV1().EndpointSlices(ns).Get(ctx, a.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	member.Trim(cached, names.FieldManager)
	obs := engine.Observed{Clusters: []engine.ObservedCluster{{ID: "member2", Reachable: true, Objects: snapshot.Objects{Namespaces: []string{ns},
		EndpointSlices: []*discoveryv1.EndpointSlice{cached}}}}}
	a.Verb, a.Object = engine.VerbUpdate, slice(managed, newOwner, "10.0.0.2")
	if err := r.execute(ctx, obs, a); err != nil {
		t.Fatal(err)
	}

	live, err := cm.Client.DiscoveryV1().EndpointSlices(ns).Get(ctx, a.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, on := live.Labels["ours-once"]; on || live.Labels["team"] != "blue" || live.Labels[names.ManagedByLabel] != names.ManagedByValue {
		t.Errorf("labels %v: want ours-once gone, team=blue and ours kept", live.Labels)
	}
	if live.Annotations["note"] != "theirs" {
		t.Errorf("annotations %v: want theirs kept", live.Annotations)
	}
	var owners []string
	for _, o := range live.OwnerReferences {
		owners = append(owners, o.Name)
	}
	if strings.Join(owners, ",") != "derived-new,their-owner" {
		t.Errorf("owners %v, want derived-new (the controller) and their-owner", owners)
	}
	if len(live.Endpoints) != 1 || live.Endpoints[0].Addresses[0] != "10.0.0.2" {
		t.Errorf("endpoints %v, want 10.0.0.2", live.Endpoints)
	}
	var kept bool
	for _, e := range live.ManagedFields {
		kept = kept || e.Manager == "someone-else"
	}
	if !kept {
		t.Errorf("someone-else's managedFields entry lost: %+v", live.ManagedFields)
	}
}

// A create of an object that exists already, carrying our label, because the cache had not shown
// it yet (our own create of an earlier pass): no error, and what is there is remembered for the
// next round to decide from. Without our label it is somebody else's (TestWritesNeverTakeOver).
func TestCreateFindsOurOwnObject(t *testing.T) {
	cm, ns := realMemberNamespace(t, "e2e-ours-")
	ctx := context.Background()
	r := joinedReconciler(t, cm)
	managed := map[string]string{names.ManagedByLabel: names.ManagedByValue, mcsv1beta1.LabelServiceName: "web"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-web", Namespace: ns, Labels: managed},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	create := engine.Action{Cluster: "member2", Kind: snapshot.KindService, Namespace: ns, Name: "derived-web", Verb: engine.VerbCreate, Object: svc}
	if err := r.execute(ctx, engine.Observed{}, create); err != nil {
		t.Fatal(err)
	}
	r.clusters[0].recent = recent{} // what a cache that lost track of it shows
	if err := r.execute(ctx, engine.Observed{}, create); err != nil {
		t.Fatalf("create of our own object again: %v", err)
	}
	got := overlay(&r.clusters[0].recent, snapshot.KindService, ns, nil, func(o *corev1.Service) bool { return o.Name == "derived-web" })
	if len(got) != 1 || got[0].Spec.ClusterIP == "" {
		t.Errorf("after the create found it: remembered %v, want the Service as the apiserver holds it", got)
	}
}
