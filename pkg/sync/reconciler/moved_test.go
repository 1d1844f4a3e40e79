package reconciler

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// A member that was known as member3 (its context) joined as east (its ClusterProperty): the copy
// m2 holds under member3 is deleted, once the copy under east is written, in the same sync; the
// import then names east alone. Before, member3 stood as an unread cluster for good, and its
// copy beside east's gave consumers the same endpoints twice.
func TestMovedIDCopiesGoOnceTheNewOnesAreWritten(t *testing.T) {
	given := clusterset.Ref{Context: "member3", ID: "member3", IDSource: clusterset.IDFromContext}
	movesOnce(t, &clusterset.Connection{Ref: clusterset.Ref{Context: "member3", ID: "east", IDSource: clusterset.IDFromProperty}, Given: given}, "member3", nil)
}

// member3's property said east when sync last ran, and says west now: this process never knew it
// as east, but m2's import records east's identity, member3's kube-system UID. The copy under
// east goes once west's is written, as above. Before, east stood as a cluster outside the
// clusterset for good.
func TestFormerIDRecordedByTheImportsMovesAfterARestart(t *testing.T) {
	given := clusterset.Ref{Context: "member3", ID: "member3", IDSource: clusterset.IDFromContext}
	movesOnce(t, &clusterset.Connection{Ref: clusterset.Ref{Context: "member3", ID: "west", IDSource: clusterset.IDFromProperty}, Given: given}, "east",
		map[string]string{names.SourceClusterUIDsAnnotation: "east=uid-member3"})
}

// The same restart, but member3's identity is not known (its kube-system namespace not read): east
// may be a cluster outside the clusterset, so its copy stands beside west's, never deleted.
func TestFormerIDOfAnUnknownIdentityStands(t *testing.T) {
	given := clusterset.Ref{Context: "member3", ID: "member3", IDSource: clusterset.IDFromContext}
	conn := &clusterset.Connection{Ref: clusterset.Ref{Context: "member3", ID: "west", IDSource: clusterset.IDFromProperty}, Given: given}
	order, r := syncOnce(t, conn, "east", map[string]string{names.SourceClusterUIDsAnnotation: "east=uid-member3"}, "")
	if want := []string{" " + names.EndpointSliceName("serve", "west", "serve-abc")}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("m2's slice writes %q, want west's copy written and east's kept", order)
	}
	obs, _ := r.observe("demo", "serve")
	if got := engine.FormerIDs(obs); len(got) != 0 {
		t.Errorf("FormerIDs %v with member3's identity unknown", got)
	}
}

// movesOnce: the exporter joins by conn, m2 holds its import and copy under oldID (the import
// with annotations); one sync writes the copy under the exporter's ID, then deletes oldID's.
func movesOnce(t *testing.T, conn *clusterset.Connection, oldID string, annotations map[string]string) {
	t.Helper()
	order, r := syncOnce(t, conn, oldID, annotations, "uid-member3")
	id := conn.ID
	newName, oldName := names.EndpointSliceName("serve", id, "serve-abc"), names.EndpointSliceName("serve", oldID, "serve-abc")
	if want := []string{" " + newName, "delete " + oldName}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("m2's slice writes %q, want the copy under %s written, then %s's deleted", order, id, oldID)
	}
	obs, _ := r.observe("demo", "serve")
	for _, c := range obs.Clusters {
		if c.ID != "m2" {
			continue
		}
		for _, s := range c.EndpointSlices {
			if src := s.Labels[mcsv1beta1.LabelSourceCluster]; src != id {
				t.Errorf("m2 still holds a copy from %q: %s", src, s.Name)
			}
		}
		for _, si := range c.ServiceImports {
			if len(si.Status.Clusters) != 1 || si.Status.Clusters[0].Cluster != id {
				t.Errorf("m2's import names %v, want %s alone", si.Status.Clusters, id)
			}
		}
	}
}

// syncOnce: the exporter joins by conn, its kube-system namespace's UID systemUID ("": not
// there), m2 holds its import and copy under oldID (the import with annotations); one sync of
// demo/serve. It returns m2's slice writes in order, and the reconciler.
func syncOnce(t *testing.T, conn *clusterset.Connection, oldID string, annotations map[string]string, systemUID string) ([]string, *Reconciler) {
	t.Helper()
	exporter := oneExporter(t)[0]
	objs := []any{svcObj("demo", "serve"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}}
	if systemUID != "" {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem, UID: types.UID(systemUID)}})
	}
	objs = append(objs, exporter.View().ServiceExports[0], exporter.View().EndpointSlices[0])
	moved, err := member.Joined(conn, mcsapi.V1beta1, objs...)
	if err != nil {
		t.Fatal(err)
	}
	managed := map[string]string{names.ManagedByLabel: names.ManagedByValue}
	imp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "serve", UID: "u-imp", ResourceVersion: "5", Labels: managed, Annotations: annotations},
		Spec:   mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, Ports: []mcsv1beta1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
		Status: mcsv1beta1.ServiceImportStatus{Clusters: []mcsv1beta1.ClusterStatus{{Cluster: oldID}}}}
	old := exporter.View().EndpointSlices[0].DeepCopy()
	old.Name, old.UID, old.ResourceVersion = names.EndpointSliceName("serve", oldID, "serve-abc"), "u-old", "6"
	old.Labels = map[string]string{names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, names.ManagedByLabel: names.ManagedByValue,
		mcsv1beta1.LabelServiceName: "serve", mcsv1beta1.LabelSourceCluster: oldID, discoveryv1.LabelServiceName: names.DerivedServiceName("serve")}
	consumer := readMember(t, "m2", corev1.NamespaceActive, imp, old)

	var mu sync.Mutex
	var log []write
	clusters := []*target{{Cache: moved}, consumer}
	for _, c := range clusters {
		dyn := fakeAPIServer(c.ID(), 0, &mu, &log, map[string]map[string]any{}, nil)
		dyn.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, write{cluster: c.ID(), resource: a.GetResource().Resource, name: a.(k8stesting.DeleteAction).GetName(), sub: "delete"})
			return true, nil, nil
		})
		c.Dynamic = dyn
	}
	r := testReconciler(nil, clusters...)
	r.failing, r.pending = map[key]map[object]failure{}, map[key][]Change{}
	if err := r.syncKey(context.Background(), key{Namespace: "demo", Name: "serve"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	var order []string
	for _, w := range log {
		if w.cluster == "m2" && w.resource == "endpointslices" {
			order = append(order, w.sub+" "+w.name)
		}
	}
	mu.Unlock()
	return order, r
}
