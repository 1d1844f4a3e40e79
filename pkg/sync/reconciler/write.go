package reconciler

// Writes: one planned action applied to a member, without ever taking over an object.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/klog/v2"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/decode"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// writeKind is how one kind the engine plans is written, read back and found among what was
// observed: the one table every write consults.
type writeKind struct {
	gvr        func(mcsVersion string) schema.GroupVersionResource
	apiVersion func(mcsVersion string) string
	kind       string
	decode     func(*unstructured.Unstructured) (metav1.Object, error)
	observed   func(engine.ObservedCluster) []metav1.Object
}

func mcsKind(resource, kind string) (func(string) schema.GroupVersionResource, func(string) string, string) {
	return func(v string) schema.GroupVersionResource { return mcsapi.GVR(v, resource) },
		func(v string) string { return mcsapi.Group + "/" + v }, kind
}

func fixed(gvr schema.GroupVersionResource) (func(string) schema.GroupVersionResource, func(string) string) {
	return func(string) schema.GroupVersionResource { return gvr }, func(string) string { return gvr.GroupVersion().String() }
}

var writeKinds = func() map[string]writeKind {
	si, siAV, siKind := mcsKind(mcsapi.ServiceImports, mcsv1beta1.ServiceImportKindName)
	se, seAV, seKind := mcsKind(mcsapi.ServiceExports, mcsv1beta1.ServiceExportKindName)
	svc, svcAV := fixed(schema.GroupVersionResource{Version: "v1", Resource: "services"})
	sl, slAV := fixed(schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"})
	return map[string]writeKind{
		snapshot.KindServiceImport: {si, siAV, siKind, decodeAs[mcsv1beta1.ServiceImport],
			func(c engine.ObservedCluster) []metav1.Object { return asObjects(c.ServiceImports) }},
		snapshot.KindService: {svc, svcAV, "Service", decodeAs[corev1.Service],
			func(c engine.ObservedCluster) []metav1.Object { return asObjects(c.Services) }},
		snapshot.KindEndpointSlice: {sl, slAV, "EndpointSlice", decodeAs[discoveryv1.EndpointSlice],
			func(c engine.ObservedCluster) []metav1.Object { return asObjects(c.EndpointSlices) }},
		snapshot.KindServiceExport: {se, seAV, seKind, decodeAs[mcsv1beta1.ServiceExport],
			func(c engine.ObservedCluster) []metav1.Object { return asObjects(c.ServiceExports) }},
	}
}()

// execute performs one planned action with server-side apply (or a delete).
func (r *Reconciler) execute(ctx context.Context, obs engine.Observed, a engine.Action) error {
	m := r.cluster(a.Cluster)
	ref := fmt.Sprintf("cluster %q: %s %s/%s", a.Cluster, a.Kind, a.Namespace, a.Name)
	if !r.writesIn(m) {
		// The engine plans nothing outside Observed.For; a write there would be a bug, refused.
		return fmt.Errorf("%s: sync --local=%s writes in no other member", ref, r.opts.Local)
	}
	if r.opts.DryRun {
		return nil
	}
	wk, ok := writeKinds[a.Kind]
	if !ok {
		return fmt.Errorf("%s: unknown kind", ref)
	}
	var sub string
	res := m.Dynamic.Resource(wk.gvr(m.State().Version)).Namespace(a.Namespace)
	r.writes.Add(1)
	if r.opts.Metrics != nil {
		r.opts.Metrics.Writes.WithLabelValues(a.Cluster, a.Kind, a.Verb).Inc()
	}
	last := observedObject(obs, a, wk)
	if a.Verb == engine.VerbDelete {
		var opts metav1.DeleteOptions
		if last != nil && last.GetUID() != "" {
			// Only the object we decided about: not one somebody made in its place since.
			uid := last.GetUID()
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		err := res.Delete(ctx, a.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("%s: delete: %w", ref, err)
		}
		if last != nil {
			m.recent.deleted(a.Kind, last)
		}
		return nil
	}
	obj, err := applyObject(a, wk.apiVersion(m.State().Version), wk.kind, writeUID(a, last))
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if a.Verb == engine.VerbStatus {
		sub = "status"
	}
	var out *unstructured.Unstructured
	if a.Verb == engine.VerbCreate {
		// A plain create, which fails on an existing object: a forced apply would silently take
		// over an object of the same name that the cache had not shown yet.
		out, err = res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldManager: r.opts.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// Ours (our label: what the engine takes for ours in the cache too) when the cache had
			// not shown it: remembered as read, for the next round to decide from.
			if out, err = res.Get(ctx, a.Name, metav1.GetOptions{}); err != nil || !names.IsManaged(out.GetLabels()) {
				return fmt.Errorf("%s: exists already and was not created by kubectl-mcs; left alone", ref)
			}
			klog.V(2).InfoS("create found our own object, not yet cached; deciding again from it", "cluster", a.Cluster, "kind", a.Kind, "object", a.Namespace+"/"+a.Name)
		}
	} else if a.Kind == snapshot.KindEndpointSlice {
		// The write every endpoint change makes in every importing cluster: see slicepatch.go.
		var body []byte
		if body, err = slicePatch(obj, last, r.opts.FieldManager); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		out, err = res.Patch(ctx, a.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: r.opts.FieldManager})
		if isUIDMismatch(err) || apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %s: replaced by another object since it was read; deciding again", ref, a.Verb)
		}
	} else {
		if err := r.upgradeOwnership(ctx, res, a, last); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		var body []byte
		if body, err = json.Marshal(obj); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		force := true
		out, err = res.Patch(ctx, a.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: r.opts.FieldManager, Force: &force}, subresources(sub)...)
		if isUIDMismatch(err) {
			return fmt.Errorf("%s: %s: replaced by another object since it was read; deciding again", ref, a.Verb)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", ref, a.Verb, err)
	}
	if o, err := wk.decode(out); err == nil {
		member.Trim(o, r.opts.FieldManager) // as the cache would hold it
		m.recent.wrote(a.Kind, o)
	}
	if a.Kind == snapshot.KindServiceExport {
		r.recordConflictEvent(m, obs, a)
	}
	return nil
}

// decodeAs decodes what a write returned into the type the engine observes; a failed decode's
// nil pointer stays out of the interface.
func decodeAs[T any, PT interface {
	*T
	metav1.Object
}](u *unstructured.Unstructured) (metav1.Object, error) {
	o, err := decode.Unstructured[T](u)
	if err != nil {
		return nil, err
	}
	return PT(o), nil
}

// observedObject is the object an action is about, as observed (nil for a create).
func observedObject(obs engine.Observed, a engine.Action, wk writeKind) metav1.Object {
	for _, c := range obs.Clusters {
		if c.ID != a.Cluster {
			continue
		}
		for _, o := range wk.observed(c) {
			if o.GetNamespace() == a.Namespace && o.GetName() == a.Name {
				return o
			}
		}
	}
	return nil
}

func asObjects[T metav1.Object](in []T) []metav1.Object {
	out := make([]metav1.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}

func subresources(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// upgradeOwnership hands the fields that our create set (owned through an Update operation) to
// our apply manager before the first apply, so that an apply that leaves a field out (a port, a
// label) removes it instead of leaving it co-owned. The cache keeps the other managers'
// managedFields entries only as stubs (member.Trim): enough to tell whether a hand-over is due
// and, in the common case, to make it in place (handOverInPlace); otherwise the patch, which
// replaces the whole list, is made from the object read live. EndpointSlices are never applied
// (slicePatch), so never handed over.
func (r *Reconciler) upgradeOwnership(ctx context.Context, res dynamic.ResourceInterface, a engine.Action, last metav1.Object) error {
	if a.Verb != engine.VerbUpdate {
		return nil
	}
	fm := r.opts.FieldManager
	if !handOverDue(last, fm) {
		return nil
	}
	counted := func() {
		r.writes.Add(1)
		if r.opts.Metrics != nil {
			r.opts.Metrics.Writes.WithLabelValues(a.Cluster, a.Kind, "ownership").Inc()
		}
	}
	if patch := handOverInPlace(last, fm); patch != nil {
		counted()
		_, err := res.Patch(ctx, a.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err // a conflict: the object changed since it was read; decided again later
		}
		klog.V(2).InfoS("in-place ownership hand-over refused; reading the object", "cluster", a.Cluster, "kind", a.Kind, "object", a.Namespace+"/"+a.Name, "err", err)
	}
	live, err := res.Get(ctx, a.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading it to take over the fields of our create: %w", err)
	}
	if live.GetUID() != last.GetUID() {
		return nil // replaced since: the apply's UID precondition refuses it
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(fm), fm)
	if err != nil || patch == nil {
		return err
	}
	counted()
	if _, err := res.Patch(ctx, a.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("taking over the fields of our create for server-side apply: %w", err)
	}
	return nil
}

// handOverDue: csaupgrade has something to do exactly when an Update entry of our manager on the
// main resource is left (with the same name for both managers, that is its whole test).
func handOverDue(last metav1.Object, fm string) bool {
	if last == nil {
		return false
	}
	for _, e := range last.GetManagedFields() {
		if e.Manager == fm && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// handOverInPlace is the hand-over in the common case, where our create's entry is the only one
// of ours: that entry, found at its index (member.Trim keeps every entry in its place), becomes an
// Apply entry, which is what csaupgrade makes of it, without reading the other managers' entries.
// The tests and the resourceVersion make the apiserver refuse it if the object is not the one
// the cache holds. nil: not that case.
func handOverInPlace(last metav1.Object, fm string) []byte {
	at := -1
	for i, e := range last.GetManagedFields() {
		if e.Manager != fm || e.Subresource != "" {
			continue
		}
		if at >= 0 || e.Operation != metav1.ManagedFieldsOperationUpdate {
			return nil
		}
		at = i
	}
	if at < 0 {
		return nil
	}
	entry := fmt.Sprintf("/metadata/managedFields/%d/", at)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": entry + "manager", "value": fm},
		{"op": "test", "path": entry + "operation", "value": string(metav1.ManagedFieldsOperationUpdate)},
		{"op": "replace", "path": entry + "operation", "value": string(metav1.ManagedFieldsOperationApply)},
		// As csaupgrade does: a stale object fails with a conflict.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": last.GetResourceVersion()},
	})
	if err != nil {
		return nil
	}
	return patch
}

// isUIDMismatch reports the apiserver's refusal of a write that names another object's UID: 422
// "metadata.uid: field is immutable" when an object of that name exists, 409 "uid mismatch" when
// none does. Either way the object we decided about is not the one there.
func isUIDMismatch(err error) bool {
	if apierrors.IsConflict(err) {
		return strings.Contains(err.Error(), "uid mismatch")
	}
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// writeUID is the UID the write must find: the object's as we read it.
func writeUID(a engine.Action, last metav1.Object) types.UID {
	switch {
	case a.Verb == engine.VerbCreate:
		return ""
	case last != nil:
		return last.GetUID()
	case a.Object != nil:
		if o, err := meta.Accessor(a.Object); err == nil {
			return o.GetUID()
		}
	}
	return ""
}

// applyObject is the apply configuration of an action (and a create's whole object): only the
// fields we own, and the UID the object must have (see writeUID; "" for none).
func applyObject(a engine.Action, apiVersion, kind string, uid types.UID) (map[string]any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.Object)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind}
	md, _ := u["metadata"].(map[string]any)
	keep := map[string]any{"name": a.Name, "namespace": a.Namespace}
	if uid != "" {
		keep["uid"] = string(uid)
	}
	if a.Kind != snapshot.KindServiceExport && a.Verb != engine.VerbStatus {
		for _, f := range []string{"labels", "annotations", "ownerReferences"} {
			if v, ok := md[f]; ok {
				keep[f] = v
			}
		}
	}
	obj["metadata"] = keep
	switch {
	case a.Kind == snapshot.KindServiceExport:
		conds, _, _ := unstructured.NestedSlice(u, "status", "conditions")
		var mine []any
		for _, c := range conds {
			if t, _ := c.(map[string]any)["type"].(string); engine.OwnsCondition(t) {
				mine = append(mine, c)
			}
		}
		obj["status"] = map[string]any{"conditions": mine}
	case a.Verb == engine.VerbStatus:
		obj["status"] = u["status"]
	default:
		for k, v := range u {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				obj[k] = v
			}
		}
	}
	return obj, nil
}
