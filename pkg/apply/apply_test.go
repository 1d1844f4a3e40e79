package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

var exports = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1beta1", Resource: "serviceexports"}

func export(name string, managed bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("multicluster.x-k8s.io/v1beta1")
	u.SetKind("ServiceExport")
	u.SetNamespace("demo")
	u.SetName(name)
	if managed {
		u.SetLabels(map[string]string{names.ManagedByLabel: names.ManagedByValue})
	}
	return u
}

// cluster is a fake member holding objs; its apply patches are answered with the object sent,
// with a uid and managedFields as an apiserver's would be, and recorded. As an apiserver, it
// keeps the resourceVersion of an object whose labels the patch does not change, and gives a new
// one otherwise.
func cluster(t *testing.T, objs ...runtime.Object) (*dynamicfake.FakeDynamicClient, *[]clienttesting.PatchActionImpl) {
	t.Helper()
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{exports: "ServiceExportList"}, objs...)
	var patches []clienttesting.PatchActionImpl
	c.PrependReactor("patch", "serviceexports", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchActionImpl)
		patches = append(patches, p)
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(p.GetPatch(), &u.Object); err != nil {
			return true, nil, err
		}
		u.SetUID("uid-1")
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: p.PatchOptions.FieldManager}})
		u.SetResourceVersion("2")
		if cur, err := c.Tracker().Get(p.GetResource(), p.GetNamespace(), p.GetName()); err == nil {
			if held := cur.(*unstructured.Unstructured); reflect.DeepEqual(held.GetLabels(), u.GetLabels()) {
				u.SetResourceVersion(held.GetResourceVersion())
			}
		}
		return true, u, nil
	})
	return c, &patches
}

func items(c *dynamicfake.FakeDynamicClient, objs ...*unstructured.Unstructured) []Item {
	var out []Item
	for _, o := range objs {
		out = append(out, Item{Cluster: "member1", Client: c, GVR: exports, Object: o})
	}
	return out
}

func TestPartitionAndCheckOwnership(t *testing.T) {
	c, _ := cluster(t, export("ours", true), export("theirs", false))
	its := items(c, export("ours", true), export("theirs", true), export("absent", true))
	ours, foreign, err := Partition(context.Background(), its)
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != 2 || ours[0].Object.GetName() != "ours" || ours[1].Object.GetName() != "absent" ||
		len(foreign) != 1 || foreign[0].Object.GetName() != "theirs" {
		t.Errorf("ours %v, foreign %v", ours, foreign)
	}
	err = CheckOwnership(context.Background(), its)
	if err == nil || err.Error() != `cluster "member1": serviceexport.multicluster.x-k8s.io demo/theirs exists and was not created by kubectl-mcs (no app.kubernetes.io/managed-by=kubectl-mcs label); refusing to change it` {
		t.Errorf("CheckOwnership: %v", err)
	}
	if err := CheckOwnership(context.Background(), its[:1]); err != nil {
		t.Errorf("only ours: %v", err)
	}

	// A read that fails is an error naming the object, not "absent".
	c.PrependReactor("get", "serviceexports", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(exports.GroupResource(), "ours", nil)
	})
	if err := CheckOwnership(context.Background(), its); err == nil || !strings.HasPrefix(err.Error(), `cluster "member1": serviceexport.multicluster.x-k8s.io demo/ours: `) {
		t.Errorf("forbidden read: %v", err)
	}
}

// Each object is told in kubectl apply's words: created, configured, or unchanged when the
// apply stored nothing (its resourceVersion stayed); --dry-run=client sends nothing and says
// created or configured (dry run).
func TestApplyDryRunAndOutput(t *testing.T) {
	const unchanged, changed = 1, 2
	for _, tc := range []struct {
		dryRun  cmdutil.DryRunStrategy
		format  string
		exists  int
		patches int
		dryAll  bool
		want    string
	}{
		{cmdutil.DryRunNone, "", 0, 1, false, "member1: serviceexport.multicluster.x-k8s.io/serve created -n demo\n"},
		{cmdutil.DryRunNone, "", unchanged, 1, false, "member1: serviceexport.multicluster.x-k8s.io/serve unchanged -n demo\n"},
		{cmdutil.DryRunNone, "", changed, 1, false, "member1: serviceexport.multicluster.x-k8s.io/serve configured -n demo\n"},
		{cmdutil.DryRunServer, "", 0, 1, true, "member1: serviceexport.multicluster.x-k8s.io/serve created (server dry run) -n demo\n"},
		{cmdutil.DryRunServer, "", changed, 1, true, "member1: serviceexport.multicluster.x-k8s.io/serve configured (server dry run) -n demo\n"},
		{cmdutil.DryRunClient, "", 0, 0, false, "member1: serviceexport.multicluster.x-k8s.io/serve created (dry run) -n demo\n"},
		{cmdutil.DryRunClient, "", unchanged, 0, false, "member1: serviceexport.multicluster.x-k8s.io/serve configured (dry run) -n demo\n"},
		{cmdutil.DryRunClient, "name", 0, 0, false, "member1: serviceexport.multicluster.x-k8s.io/serve\n"},
	} {
		var held []runtime.Object
		if tc.exists > 0 {
			h := export("serve", true)
			h.SetResourceVersion("1")
			if tc.exists == changed {
				h.SetLabels(map[string]string{"other": "x"})
			}
			held = append(held, h)
		}
		c, patches := cluster(t, held...)
		f := &Flags{DryRun: tc.dryRun, FieldManager: "mgr", Print: printers.OutputFlags{Format: tc.format}}
		var out bytes.Buffer
		if err := f.Apply(context.Background(), &out, items(c, export("serve", true))); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%v -o %q (exists: %d): %q, want %q", tc.dryRun, tc.format, tc.exists, out.String(), tc.want)
		}
		if len(*patches) != tc.patches {
			t.Fatalf("%v: %d patches, want %d", tc.dryRun, len(*patches), tc.patches)
		}
		for _, p := range *patches {
			o := p.PatchOptions
			if p.GetPatchType() != types.ApplyPatchType || o.FieldManager != "mgr" || o.Force == nil || !*o.Force || o.FieldValidation != "Strict" ||
				(len(o.DryRun) == 1 && o.DryRun[0] == metav1.DryRunAll) != tc.dryAll {
				t.Errorf("%v: patch %s with %+v", tc.dryRun, p.GetPatchType(), o)
			}
		}
	}
}

func TestApplyPrintsWhatTheServerReturned(t *testing.T) {
	c, _ := cluster(t)
	f := &Flags{Print: printers.OutputFlags{Format: "json"}}
	var out bytes.Buffer
	if err := f.Apply(context.Background(), &out, items(c, export("a", true), export("b", true))); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string                      `json:"kind"`
		Items []unstructured.Unstructured `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if list.Kind != "List" || len(list.Items) != 2 || list.Items[1].GetName() != "b" || list.Items[0].GetUID() != "uid-1" {
		t.Errorf("json output:\n%s", out.String())
	}
	if strings.Contains(out.String(), "managedFields") || strings.Contains(out.String(), "serverside-applied") {
		t.Errorf("json output has managedFields or lines:\n%s", out.String())
	}
}

func TestDeleteOnlyOurs(t *testing.T) {
	for _, tc := range []struct {
		dryRun cmdutil.DryRunStrategy
		gone   bool
		line   string
	}{
		{cmdutil.DryRunNone, true, "member1: serviceexport.multicluster.x-k8s.io/ours deleted -n demo\n"},
		{cmdutil.DryRunClient, false, "member1: serviceexport.multicluster.x-k8s.io/ours deleted (dry run) -n demo\n"},
	} {
		ours, theirs := export("ours", true), export("theirs", false)
		ours.SetUID("uid-ours")
		c, _ := cluster(t, ours, theirs)
		var deletes []metav1.DeleteOptions
		c.PrependReactor("delete", "serviceexports", func(a clienttesting.Action) (bool, runtime.Object, error) {
			deletes = append(deletes, a.(clienttesting.DeleteActionImpl).DeleteOptions)
			return false, nil, nil
		})
		f := &Flags{DryRun: tc.dryRun}
		var out, errOut bytes.Buffer
		n, err := f.Delete(context.Background(), &out, &errOut, items(c, export("ours", true), export("theirs", true), export("absent", true)))
		if err != nil || n != 1 {
			t.Fatalf("%d deleted, %v; want 1", n, err)
		}
		if out.String() != tc.line {
			t.Errorf("%v: stdout %q, want %q", tc.dryRun, out.String(), tc.line)
		}
		if errOut.String() != "Warning: cluster \"member1\": serviceexport.multicluster.x-k8s.io demo/theirs was not created by kubectl-mcs; left alone\n" {
			t.Errorf("%v: stderr %q", tc.dryRun, errOut.String())
		}
		_, err = c.Resource(exports).Namespace("demo").Get(context.Background(), "ours", metav1.GetOptions{})
		if apierrors.IsNotFound(err) != tc.gone {
			t.Errorf("%v: ours gone=%v, want %v", tc.dryRun, apierrors.IsNotFound(err), tc.gone)
		}
		if _, err := c.Resource(exports).Namespace("demo").Get(context.Background(), "theirs", metav1.GetOptions{}); err != nil {
			t.Errorf("%v: theirs: %v", tc.dryRun, err)
		}
		// The delete is conditional on the uid read: an object recreated meanwhile is not ours.
		if tc.gone && (len(deletes) != 1 || deletes[0].Preconditions == nil || *deletes[0].Preconditions.UID != "uid-ours") {
			t.Errorf("delete options %+v", deletes)
		}
	}
}

func TestResourceName(t *testing.T) {
	for gvr, want := range map[schema.GroupVersionResource]string{
		exports: "serviceexport.multicluster.x-k8s.io",
		{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}:      "propagationpolicy.policy.karmada.io",
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}:   "customresourcedefinition.apiextensions.k8s.io",
		{Version: "v1", Resource: "services"}:                                                   "service",
		{Group: "networking.karmada.io", Version: "v1alpha1", Resource: "multiclusterservices"}: "multiclusterservice.networking.karmada.io",
		{Group: "example.io", Version: "v1", Resource: "widgets"}:                               "widget.example.io",
	} {
		if got := resourceName(gvr); got != want {
			t.Errorf("%v: %q, want %q", gvr, got, want)
		}
	}
}
