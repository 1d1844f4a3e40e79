package uninstall

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

func resourceOf(dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string) dynamic.ResourceInterface {
	if namespace != "" {
		return dyn.Resource(gvr).Namespace(namespace)
	}
	return dyn.Resource(gvr)
}

// ref names an object in errors: cluster "member1": deployment.apps kubectl-mcs-system/kubectl-mcs-sync.
func ref(cluster string, gvr schema.GroupVersionResource, namespace, name string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	return fmt.Sprintf("cluster %q: %s %s", cluster, apply.ResourceName(gvr), name)
}

// deleteNamed deletes namespace/name when it exists and is ours; one that is absent is nothing
// to do (a second uninstall, or what the other mode writes), one that is not ours is left alone,
// saying so.
func (o *Options) deleteNamed(ctx context.Context, s *site, gvr schema.GroupVersionResource, namespace, name string) error {
	cur, err := resourceOf(s.conn.Dynamic, gvr, namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", ref(s.conn.ID, gvr, namespace, name), err)
	case !names.IsManaged(cur.GetLabels()):
		fmt.Fprintf(o.ErrOut, "Warning: %s was not created by kubectl-mcs (no %s=%s label); left alone\n",
			ref(s.conn.ID, gvr, namespace, name), names.ManagedByLabel, names.ManagedByValue)
		return nil
	}
	return o.deleteObject(ctx, s, gvr, cur)
}

// deleteObject deletes cur, as read (our label checked by the caller), and prints it. The UID
// precondition keeps a delete from reaching an object created since under the same name.
func (o *Options) deleteObject(ctx context.Context, s *site, gvr schema.GroupVersionResource, cur *unstructured.Unstructured) error {
	if cur.GetDeletionTimestamp() != nil {
		return nil // being deleted already: a second uninstall, or the namespace's
	}
	if o.Write.DryRun != cmdutil.DryRunClient {
		uid, background := cur.GetUID(), metav1.DeletePropagationBackground
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
		if o.Write.DryRun == cmdutil.DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		err := resourceOf(s.conn.Dynamic, gvr, cur.GetNamespace()).Delete(ctx, cur.GetName(), opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %w", ref(s.conn.ID, gvr, cur.GetNamespace(), cur.GetName()), err)
		}
	}
	return o.report(printers.Written{Cluster: s.conn.ID, Resource: apply.ResourceName(gvr), Object: cur}, "deleted")
}

// report prints what was done to one object (a line, unless -o asks for the documents, which
// Run prints at the end) and keeps it.
func (o *Options) report(w printers.Written, op string) error {
	o.done = append(o.done, w)
	if o.Write.Print.Documents() {
		return nil
	}
	return o.Write.Print.PrintLine(o.Out, w, o.Write.Operation(op))
}
