// Package apply writes and deletes objects across member clusters the way every kubectl-mcs
// command does: ownership checked first (never touch what we did not create), then server-side
// apply with strict field validation, kubectl's dry-run semantics and output formats.
package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Item is one object in one cluster.
type Item struct {
	Cluster string
	Client  dynamic.Interface
	GVR     schema.GroupVersionResource
	Object  *unstructured.Unstructured
}

// Ref names the item the way errors and output do: cluster "member1": serviceexport.multicluster.x-k8s.io demo/serve.
func (it Item) Ref() string {
	return fmt.Sprintf("cluster %q: %s %s", it.Cluster, resourceName(it.GVR), namespacedName(it.Object))
}

func (it Item) resource() dynamic.ResourceInterface {
	if ns := it.Object.GetNamespace(); ns != "" {
		return it.Client.Resource(it.GVR).Namespace(ns)
	}
	return it.Client.Resource(it.GVR)
}

// Flags are the write flags every writing command shares.
type Flags struct {
	DryRun       cmdutil.DryRunStrategy
	FieldManager string
	Print        printers.OutputFlags
}

// AddFlags registers --dry-run, --field-manager and -o (f.Print's formats: json, yaml and name
// unless set).
func AddFlags(cmd *cobra.Command, f *Flags) {
	cmdutil.AddDryRunFlag(cmd)
	cmd.Flags().StringVar(&f.FieldManager, "field-manager", names.FieldManager, "Name of the manager used to track field ownership (server-side apply).")
	f.Print.AddFlags(cmd)
}

// Complete reads --dry-run from the command.
func (f *Flags) Complete(cmd *cobra.Command) error {
	var err error
	f.DryRun, err = cmdutil.GetDryRunStrategy(cmd)
	return err
}

// Validate checks the output format.
func (f *Flags) Validate() error { return f.Print.Validate() }

// Operation is how output names what was done to an object, dry run included, as kubectl does.
func (f *Flags) Operation(op string) string {
	switch f.DryRun {
	case cmdutil.DryRunClient:
		return op + " (dry run)"
	case cmdutil.DryRunServer:
		return op + " (server dry run)"
	}
	return op
}

// Partition splits items into those that are absent or ours and those that exist without our
// managed-by label.
func Partition(ctx context.Context, items []Item) (ours, foreign []Item, err error) {
	for _, it := range items {
		cur, err := it.resource().Get(ctx, it.Object.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			ours = append(ours, it)
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", it.Ref(), err)
		case names.IsManaged(cur.GetLabels()):
			ours = append(ours, it)
		default:
			foreign = append(foreign, it)
		}
	}
	return ours, foreign, nil
}

// CheckOwnership fails, naming the object, when any item already exists without our managed-by
// label. Run it on every item before the first write so that nothing is half written.
func CheckOwnership(ctx context.Context, items []Item) error {
	_, foreign, err := Partition(ctx, items)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return fmt.Errorf("%s exists and was not created by kubectl-mcs (no %s=%s label); refusing to change it",
			foreign[0].Ref(), names.ManagedByLabel, names.ManagedByValue)
	}
	return nil
}

// Apply server-side applies every item (or only prints it under --dry-run=client) and prints
// the result in the chosen format.
func (f *Flags) Apply(ctx context.Context, out io.Writer, items []Item) error {
	printed, err := f.ApplyEach(ctx, out, items)
	if err != nil {
		return err
	}
	return f.Print.PrintObjects(out, printed)
}

// ApplyEach is Apply without the documents of -o yaml|json: it prints a line per item (unless
// -o asks for documents) and returns what was written, for a command that writes in several
// steps to print as one (Print.PrintObjects).
func (f *Flags) ApplyEach(ctx context.Context, out io.Writer, items []Item) ([]printers.Written, error) {
	var printed []printers.Written
	for _, it := range items {
		res := it.Object
		before, err := it.resource().Get(ctx, it.Object.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			before, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Ref(), err)
		}
		if f.DryRun != cmdutil.DryRunClient {
			data, err := json.Marshal(it.Object.Object)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Ref(), err)
			}
			force := true // only our own objects reach here (CheckOwnership)
			opts := metav1.PatchOptions{FieldManager: f.FieldManager, Force: &force, FieldValidation: "Strict"}
			if f.DryRun == cmdutil.DryRunServer {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			res, err = it.resource().Patch(ctx, it.Object.GetName(), types.ApplyPatchType, data, opts)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Ref(), err)
			}
		}
		op := outcome(before, res, f.DryRun)
		printed = append(printed, printers.Written{Cluster: it.Cluster, Resource: resourceName(it.GVR), Object: res})
		if !f.Print.Documents() {
			if err := f.Print.PrintLine(out, it.written(), f.Operation(op)); err != nil {
				return nil, err
			}
		}
	}
	return printed, nil
}

// outcome names what an apply did in kubectl apply's words: created when the object did not
// exist, unchanged when the apiserver stored nothing (its resourceVersion is the one read
// before), configured otherwise. A server dry run stores nothing: the object returned is compared
// with the one read, but for what a write alone changes. --dry-run=client sends nothing, and
// says configured for an object that exists, as kubectl does.
func outcome(before, after *unstructured.Unstructured, dry cmdutil.DryRunStrategy) string {
	switch {
	case before == nil:
		return "created"
	case dry == cmdutil.DryRunClient:
		return "configured"
	case dry == cmdutil.DryRunServer && equality.Semantic.DeepEqual(stored(before), stored(after)):
		return "unchanged"
	case dry != cmdutil.DryRunServer && after.GetResourceVersion() == before.GetResourceVersion():
		return "unchanged"
	}
	return "configured"
}

// stored is what an object holds but for what every write changes (resourceVersion, the
// managedFields' times, generation).
func stored(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetResourceVersion("")
	c.SetGeneration(0)
	mf := c.GetManagedFields()
	for i := range mf {
		mf[i].Time = nil
	}
	c.SetManagedFields(mf)
	return c.Object
}

// Delete removes items that exist and carry our label; others are reported and left alone. It
// returns how many it removed (or, dry, would remove).
func (f *Flags) Delete(ctx context.Context, out, errOut io.Writer, items []Item) (int, error) {
	deleted := 0
	for _, it := range items {
		cur, err := it.resource().Get(ctx, it.Object.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("%s: %w", it.Ref(), err)
		}
		if !names.IsManaged(cur.GetLabels()) {
			fmt.Fprintf(errOut, "Warning: %s was not created by kubectl-mcs; left alone\n", it.Ref())
			continue
		}
		if f.DryRun != cmdutil.DryRunClient {
			opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(cur.GetUID())}}
			if f.DryRun == cmdutil.DryRunServer {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			if err := it.resource().Delete(ctx, it.Object.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
				return deleted, fmt.Errorf("%s: %w", it.Ref(), err)
			}
		}
		deleted++
		if err := f.Print.PrintLine(out, it.written(), f.Operation("deleted")); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

func (it Item) written() printers.Written {
	return printers.Written{Cluster: it.Cluster, Resource: resourceName(it.GVR), Object: it.Object}
}

// singular maps the plural resources we write to kubectl's singular names.
var singular = map[string]string{
	"serviceexports":            "serviceexport",
	"serviceimports":            "serviceimport",
	"multiclusterservices":      "multiclusterservice",
	"propagationpolicies":       "propagationpolicy",
	"customresourcedefinitions": "customresourcedefinition",
	"clusterproperties":         "clusterproperty",
	"services":                  "service",
	"endpointslices":            "endpointslice",
}

func resourceName(gvr schema.GroupVersionResource) string {
	r, ok := singular[gvr.Resource]
	switch {
	case ok:
	case strings.HasSuffix(gvr.Resource, "ies"): // validatingadmissionpolicies
		r = strings.TrimSuffix(gvr.Resource, "ies") + "y"
	default:
		r = strings.TrimSuffix(gvr.Resource, "s")
	}
	if gvr.Group == "" {
		return r
	}
	return r + "." + gvr.Group
}

func namespacedName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

func ptr[T any](v T) *T { return &v }
