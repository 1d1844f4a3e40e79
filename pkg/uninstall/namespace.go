package uninstall

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// maxNamed is how many of a kept namespace's objects its warning names.
const maxNamed = 5

// deleteNamespace deletes kubectl-mcs-system when install or dns-server's manifests made it (our
// label) and nothing of anybody else's is left in it (Foreign); else it keeps it, naming what
// keeps it. Deleting a namespace deletes all it holds, which is why it goes last and only so.
func (o *Options) deleteNamespace(ctx context.Context, s *site) error {
	ns := names.SystemNamespace
	cur, err := s.conn.Dynamic.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("cluster %q: namespace %s: %w", s.conn.ID, ns, err)
	case cur.GetDeletionTimestamp() != nil:
		return nil
	case !names.IsManaged(cur.GetLabels()):
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q: namespace %s was not created by kubectl-mcs; left alone\n", s.conn.ID, ns)
		return nil
	}
	foreign, err := o.foreignIn(ctx, s, ns)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		more := ""
		if len(foreign) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(foreign)-maxNamed)
			foreign = foreign[:maxNamed]
		}
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q: namespace %s kept: it holds %s%s, which kubectl-mcs did not create\n",
			s.conn.ID, ns, strings.Join(foreign, ", "), more)
		return nil
	}
	return o.deleteObject(ctx, s, namespacesResource, cur)
}

// foreignIn lists every namespaced kind the member serves in ns and names what is Foreign there.
// A kind that cannot be listed is said, and counts as holding something: a namespace is deleted
// only when it is known to hold nothing of the user's.
func (o *Options) foreignIn(ctx context.Context, s *site, ns string) ([]string, error) {
	lists, err := s.conn.Discovery.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("cluster %q: discovery: %w", s.conn.ID, err)
	}
	var out []string
	if err != nil {
		out = append(out, "kinds discovery could not list ("+err.Error()+")")
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !has(r.Verbs, "list") || ignoredResources[r.Name] {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := s.conn.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("cluster %q: listing %s in namespace %s: %w", s.conn.ID, gvr.Resource, ns, err)
			}
			for i := range items.Items {
				if Foreign(r.Name, &items.Items[i]) {
					out = append(out, apply.ResourceName(gvr)+"/"+items.Items[i].GetName())
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func has(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}
