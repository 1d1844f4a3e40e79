package engine

// FuzzConverge: sync's rounds against a model of the members' apiservers and of what sync's
// caches keep of them. Each round decides from the objects as the informers hold them (through
// member.Trim, interning included), writes the plan the way the reconciler does (a plain create
// attributed to our field manager, a server-side apply after handing our create's fields to it, a
// merge update of slices, status apart), with the apiserver's own field ownership
// (structured-merge-diff, the schemas client-go ships) and the defaulting and refusals the engine
// relies on; other field managers change what sync wrote meanwhile. The plan must be empty within
// a fixed number of rounds after the last foreign change, and stay empty.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/csaupgrade"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	cache "github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// convergeRounds is how many rounds after the last foreign change sync may write: the bound a
// one-shot sync gives itself ("still wants writes after 8 rounds").
const convergeRounds = 8

// fieldManagers track ownership per kind as an apiserver does: client-go's schemas for the
// built-in kinds (ports a list keyed by port and protocol, the selector atomic, ...), the
// deduced schema (lists atomic) for the mcs-api CRDs.
var fieldManagers = func() map[string]*managedfields.FieldManager {
	typed := applyconfigurations.NewTypeConverter(scheme.Scheme)
	return map[string]*managedfields.FieldManager{
		snapshot.KindService:       managedfieldstest.NewFakeFieldManager(typed, corev1.SchemeGroupVersion.WithKind("Service")),
		snapshot.KindEndpointSlice: managedfieldstest.NewFakeFieldManager(typed, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")),
		snapshot.KindServiceImport: managedfieldstest.NewFakeFieldManager(managedfields.NewDeducedTypeConverter(), schema.GroupVersionKind{Group: mcsv1beta1.GroupName, Version: "v1beta1", Kind: "ServiceImport"}),
		snapshot.KindServiceExport: managedfieldstest.NewFakeFieldManager(managedfields.NewDeducedTypeConverter(), schema.GroupVersionKind{Group: mcsv1beta1.GroupName, Version: "v1beta1", Kind: "ServiceExport"}),
	}
}()

const (
	csaManager   = "kubectl-client-side-apply"
	otherManager = "someone-else"
)

// fakeServer is one member's apiserver: its objects as stored, and the IP families it serves.
type fakeServer struct {
	id         string
	families   []corev1.IPFamily // primary first
	namespaces []string
	objs       map[string]map[key]*unstructured.Unstructured // by kind
	seq        int
	topology   *snapshot.Topology // its nodes' zones
}

func newFakeServer(id string, dual bool, namespaces []string) *fakeServer {
	s := &fakeServer{id: id, families: []corev1.IPFamily{corev1.IPv4Protocol}, namespaces: namespaces, objs: map[string]map[key]*unstructured.Unstructured{}}
	if dual {
		s.families = append(s.families, corev1.IPv6Protocol)
	}
	for _, k := range []string{snapshot.KindService, snapshot.KindEndpointSlice, snapshot.KindServiceImport, snapshot.KindServiceExport} {
		s.objs[k] = map[key]*unstructured.Unstructured{}
	}
	return s
}

func toUnstructured(o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func fromUnstructured[T any](u *unstructured.Unstructured) *T {
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		panic(err)
	}
	return &out
}

// observe is the cluster as sync's informers hold it: every object through member.Trim.
func (s *fakeServer) observe() ObservedCluster {
	c := ObservedCluster{ID: s.id, UID: "uid-" + s.id, Reachable: true, Objects: snapshot.Objects{Namespaces: slices.Clone(s.namespaces), Topology: s.topology}}
	for _, k := range sortedObjKeys(s.objs[snapshot.KindService]) {
		c.Services = append(c.Services, trimmed(fromUnstructured[corev1.Service](s.objs[snapshot.KindService][k])))
	}
	for _, k := range sortedObjKeys(s.objs[snapshot.KindEndpointSlice]) {
		c.EndpointSlices = append(c.EndpointSlices, trimmed(fromUnstructured[discoveryv1.EndpointSlice](s.objs[snapshot.KindEndpointSlice][k])))
	}
	for _, k := range sortedObjKeys(s.objs[snapshot.KindServiceImport]) {
		c.ServiceImports = append(c.ServiceImports, trimmed(fromUnstructured[mcsv1beta1.ServiceImport](s.objs[snapshot.KindServiceImport][k])))
	}
	for _, k := range sortedObjKeys(s.objs[snapshot.KindServiceExport]) {
		c.ServiceExports = append(c.ServiceExports, trimmed(fromUnstructured[mcsv1beta1.ServiceExport](s.objs[snapshot.KindServiceExport][k])))
	}
	return c
}

func trimmed[T metav1.Object](o T) T {
	cache.Trim(o, names.FieldManager)
	return o
}

func sortedObjKeys(m map[key]*unstructured.Unstructured) []key {
	out := make([]key, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b key) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// create stores obj as a plain create by manager does: defaulted, its fields attributed to
// manager (an Update entry), then given what the apiserver allocates.
func (s *fakeServer) create(kind string, obj *unstructured.Unstructured, manager string) error {
	k := key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if s.objs[kind][k] != nil {
		return fmt.Errorf("%s %s exists", kind, k)
	}
	obj = obj.DeepCopy()
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetManagedFields(nil)
	if kind == snapshot.KindServiceImport || kind == snapshot.KindServiceExport {
		delete(obj.Object, "status") // a subresource
	}
	if kind == snapshot.KindService {
		if err := s.defaultService(obj, nil); err != nil {
			return err
		}
	}
	empty := &unstructured.Unstructured{}
	empty.SetAPIVersion(obj.GetAPIVersion())
	empty.SetKind(obj.GetKind())
	out, err := fieldManagers[kind].Update(empty, obj, manager)
	if err != nil {
		return err
	}
	u := out.(*unstructured.Unstructured)
	s.seq++
	u.SetUID(types.UID(fmt.Sprintf("%s-%d", s.id, s.seq)))
	if kind == snapshot.KindService {
		s.allocate(u)
	}
	s.objs[kind][k] = u
	return nil
}

// apply is a forced server-side apply of obj by manager onto the stored object.
func (s *fakeServer) apply(kind string, obj *unstructured.Unstructured, manager string) error {
	return s.change(kind, obj, manager, true)
}

// update is an update (a merge patch, or kubectl's client-side apply) by manager: obj replaces
// the stored object whole.
func (s *fakeServer) update(kind string, obj *unstructured.Unstructured, manager string) error {
	return s.change(kind, obj, manager, false)
}

func (s *fakeServer) change(kind string, obj *unstructured.Unstructured, manager string, apply bool) error {
	k := key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	live := s.objs[kind][k]
	if live == nil {
		return fmt.Errorf("%s %s not found", kind, k)
	}
	var out runtime.Object
	var err error
	if apply {
		out, err = fieldManagers[kind].Apply(live.DeepCopy(), obj, manager, true)
	} else {
		obj = obj.DeepCopy()
		obj.SetManagedFields(live.GetManagedFields())
		out, err = fieldManagers[kind].Update(live, obj, manager)
	}
	if err != nil {
		return err
	}
	u := out.(*unstructured.Unstructured)
	if kind == snapshot.KindService {
		if err := s.defaultService(u, live); err != nil {
			return err
		}
	}
	s.objs[kind][k] = u
	return nil
}

// defaultService is the apiserver's defaulting and IP family checks of a Service (old: the stored
// one, on an update): a single-stack cluster refuses a family it is not configured for unless the
// Service is headless, and the primary family never changes.
func (s *fakeServer) defaultService(u *unstructured.Unstructured, old *unstructured.Unstructured) error {
	svc := fromUnstructured[corev1.Service](u)
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	defaultServiceFields(svc)
	for i := range svc.Spec.Ports {
		if p := &svc.Spec.Ports[i]; p.TargetPort.IntVal == 0 && p.TargetPort.StrVal == "" {
			p.TargetPort.IntVal = p.Port
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		u.Object = toUnstructured(svc).Object
		return nil
	}
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		if len(svc.Spec.IPFamilies) == 2 {
			svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		}
	}
	policy := *svc.Spec.IPFamilyPolicy
	if policy == corev1.IPFamilyPolicyRequireDualStack && len(s.families) < 2 && !headless {
		return fmt.Errorf(`cluster %q: Service %s/%s: spec.ipFamilyPolicy: this cluster is not configured for dual-stack services`, s.id, svc.Namespace, svc.Name)
	}
	for i, f := range svc.Spec.IPFamilies {
		if !headless && !slices.Contains(s.families, f) {
			return fmt.Errorf(`cluster %q: Service %s/%s: spec.ipFamilies[%d]: Invalid value: %q: not configured on this cluster`, s.id, svc.Namespace, svc.Name, i, f)
		}
	}
	if old != nil {
		was := fromUnstructured[corev1.Service](old)
		if len(was.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) > 0 && was.Spec.IPFamilies[0] != svc.Spec.IPFamilies[0] {
			return fmt.Errorf(`cluster %q: Service %s/%s: spec.ipFamilies[0]: Invalid value: %q: may not change once set`, s.id, svc.Namespace, svc.Name, svc.Spec.IPFamilies[0])
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = was.Spec.IPFamilies
		}
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = was.Spec.ClusterIP, was.Spec.ClusterIPs
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{s.families[0]}
	}
	if policy != corev1.IPFamilyPolicySingleStack && len(svc.Spec.IPFamilies) == 1 && len(s.families) == 2 {
		for _, f := range s.families {
			if f != svc.Spec.IPFamilies[0] {
				svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, f)
			}
		}
	}
	if policy == corev1.IPFamilyPolicySingleStack {
		svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
	}
	u.Object = toUnstructured(svc).Object
	return nil
}

// allocate gives a created Service one cluster IP per family.
func (s *fakeServer) allocate(u *unstructured.Unstructured) {
	svc := fromUnstructured[corev1.Service](u)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		svc.Spec.ClusterIPs = nil
		for _, f := range svc.Spec.IPFamilies {
			ip := fmt.Sprintf("10.96.0.%d", s.seq%250)
			if f == corev1.IPv6Protocol {
				ip = fmt.Sprintf("fd00:10:96::%x", s.seq)
			}
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, ip)
		}
		svc.Spec.ClusterIP = svc.Spec.ClusterIPs[0]
	} else {
		svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
	}
	u.Object = toUnstructured(svc).Object
}

// write makes one planned action as the reconciler does (pkg/sync/reconciler/write.go).
func (s *fakeServer) write(a Action) error {
	if a.Verb == VerbDelete {
		delete(s.objs[a.Kind], key{Namespace: a.Namespace, Name: a.Name})
		return nil
	}
	k := key{Namespace: a.Namespace, Name: a.Name}
	switch a.Verb {
	case VerbCreate:
		return s.create(a.Kind, ourFields(a), names.FieldManager)
	case VerbStatus:
		live := s.objs[a.Kind][k]
		if live == nil {
			return fmt.Errorf("%s %s not found", a.Kind, k)
		}
		live.Object["status"] = toUnstructured(a.Object).Object["status"]
		return nil
	}
	if a.Kind == snapshot.KindEndpointSlice {
		// A merge patch of our fields: endpoints and ports whole, our labels set.
		live := s.objs[a.Kind][k].DeepCopy()
		want := ourFields(a)
		for _, f := range []string{"endpoints", "ports", "addressType"} {
			live.Object[f] = want.Object[f]
		}
		labels := live.GetLabels()
		for lk, lv := range want.GetLabels() {
			labels[lk] = lv
		}
		live.SetLabels(labels)
		live.SetOwnerReferences(want.GetOwnerReferences())
		return s.update(a.Kind, live, names.FieldManager)
	}
	// The fields of our create are handed to our apply manager first (upgradeOwnership).
	if live := s.objs[a.Kind][k]; live != nil {
		if err := csaupgrade.UpgradeManagedFields(live, sets.New(names.FieldManager), names.FieldManager); err != nil {
			return err
		}
	}
	return s.apply(a.Kind, ourFields(a), names.FieldManager)
}

// ourFields is what sync sends of an action's object (applyObject): name, labels, annotations,
// owner references and the spec, never status.
func ourFields(a Action) *unstructured.Unstructured {
	u := toUnstructured(a.Object)
	md, _ := u.Object["metadata"].(map[string]any)
	keep := map[string]any{"name": a.Name, "namespace": a.Namespace}
	for _, f := range []string{"labels", "annotations", "ownerReferences"} {
		if v, ok := md[f]; ok {
			keep[f] = v
		}
	}
	u.Object["metadata"] = keep
	delete(u.Object, "status")
	return u
}

// serviceOf is the service an action was planned for.
func serviceOf(a Action) types.NamespacedName {
	if m, err := metaOf(a.Object); err == nil {
		if s := m.GetLabels()[mcsv1beta1.LabelServiceName]; s != "" {
			return nn(a.Namespace, s)
		}
	}
	return nn(a.Namespace, strings.TrimPrefix(a.Name, "derived-"))
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	if o == nil {
		return nil, fmt.Errorf("no object")
	}
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T", o)
	}
	return m, nil
}

func isIPv6(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Is6()
}
