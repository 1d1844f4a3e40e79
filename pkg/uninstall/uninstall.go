// Package uninstall removes what `kubectl mcs install` (either mode), `dns-server
// --print-manifests` and `init --dns` put into the clusters, in the order that keeps DNS
// answering (Steps), and on request what sync wrote and the mcs-api CRDs. What install writes is
// read from install's own builders (install.Installed); nothing without our label is deleted.
package uninstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Options is one uninstall.
type Options struct {
	// Members are --contexts; Host is the --context cluster of host mode when it is not one of
	// them (nil otherwise): it holds sync's Deployment and nothing else.
	Members []*clusterset.Connection
	Host    *clusterset.Connection
	// SyncObjects is --sync-objects; CRDs is --crds (which deletes the imports too); Force lets
	// --crds delete the ServiceExports with their CRD.
	SyncObjects, CRDs, Force bool
	// ConfigMapNamespace/ConfigMapName hold CoreDNS's Corefile (init's --dns-configmap).
	ConfigMapNamespace, ConfigMapName string
	// Wait waits, for at most Timeout, for the sync pods to stop before what sync wrote is
	// deleted, and for the CRDs and namespaces to be gone.
	Wait    bool
	Timeout time.Duration
	Write   apply.Flags
	Out     io.Writer
	ErrOut  io.Writer

	done []printers.Written
}

// site is one cluster being cleaned; err, its first failure, skips its later steps.
type site struct {
	conn   *clusterset.Connection
	member bool
	err    error
}

// Run uninstalls step by step, every cluster finishing a step before the next begins. A cluster
// that fails (unreachable, a refused write) is named in the error and skips its later steps; the
// others are still cleaned. With --crds and no --force, ServiceExports in any member refuse the
// whole uninstall before anything is changed.
func (o *Options) Run(ctx context.Context) error {
	sites := o.sites()
	if o.CRDs && !o.Force {
		var found []Exports
		for _, s := range sites {
			if s.err != nil || !s.member {
				continue
			}
			e, err := ExportsOf(ctx, s.conn)
			if err != nil {
				s.err = err
			}
			found = append(found, e)
		}
		if err := Refusal(found); err != nil {
			return err
		}
	}
	ids := make([]string, len(o.Members))
	for i, m := range o.Members {
		ids[i] = m.ID
	}
	for _, step := range Steps(o.SyncObjects, o.CRDs) {
		for _, s := range sites {
			if s.err == nil {
				s.err = o.run(ctx, step, s, ids)
			}
		}
	}
	if err := o.Write.Print.PrintObjects(o.Out, o.done); err != nil {
		return err
	}
	if len(o.done) == 0 && o.Write.Print.Format == "" {
		fmt.Fprintln(o.ErrOut, "No kubectl-mcs objects found")
	}
	return failures(sites)
}

// sites are the members, then the host when it is not one; an unreachable one fails at once.
func (o *Options) sites() []*site {
	var out []*site
	for _, m := range o.Members {
		out = append(out, &site{conn: m, member: true})
	}
	if o.Host != nil {
		out = append(out, &site{conn: o.Host})
	}
	for _, s := range out {
		if s.conn.Err != nil {
			s.err = fmt.Errorf("cluster %q (context %q): %w", s.conn.ID, s.conn.Context, s.conn.Err)
		}
	}
	return out
}

// run takes one step in one cluster. The host that is not a member ran sync's Deployment only.
func (o *Options) run(ctx context.Context, step Step, s *site, ids []string) error {
	if !s.member && step != StepSync && step != StepNamespace {
		return nil
	}
	switch step {
	case StepCorefile:
		return o.removeForward(ctx, s)
	case StepDNSServer:
		return o.deleteAll(ctx, s, install.DNSServerInstalled())
	case StepSync:
		if err := o.deleteAll(ctx, s, install.Installed(ids, s.conn.ID)); err != nil {
			return err
		}
		return o.syncStopped(ctx, s)
	case StepSyncObjects:
		return o.deleteSyncObjects(ctx, s)
	case StepCRDs:
		if err := o.deleteCRDs(ctx, s); err != nil {
			return err
		}
		crds, err := mcsapi.CRDs()
		if err != nil {
			return err
		}
		for _, c := range crds {
			if err := o.waitGone(ctx, s, mcsapi.CRDResource, "", c.GetName()); err != nil {
				return err
			}
		}
		return o.deleteProperties(ctx, s)
	case StepNamespace:
		if err := o.deleteNamespace(ctx, s); err != nil {
			return err
		}
		return o.waitGone(ctx, s, namespacesResource, "", names.SystemNamespace)
	}
	return fmt.Errorf("unknown step %d", step)
}

// deleteAll deletes objs (generated: only their kind, namespace and name count) in Ordered order.
func (o *Options) deleteAll(ctx context.Context, s *site, objs []runtime.Object) error {
	us, err := Ordered(objs)
	if err != nil {
		return err
	}
	for _, u := range us {
		gvr, ok := install.ResourceOf(u.GetKind())
		if !ok {
			return fmt.Errorf("no resource known for kind %s", u.GetKind())
		}
		if err := o.deleteNamed(ctx, s, gvr, u.GetNamespace(), u.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// waiting says whether this run waits for deletions to finish: not in a dry run, which deletes
// nothing.
func (o *Options) waiting() bool { return o.Wait && o.Write.DryRun == cmdutil.DryRunNone }

// waitGone waits for one deleted object to be gone, when waiting.
func (o *Options) waitGone(ctx context.Context, s *site, gvr schema.GroupVersionResource, namespace, name string) error {
	if !o.waiting() {
		return nil
	}
	return o.gone(ctx, ref(s.conn.ID, gvr, namespace, name), notFound(s.conn, gvr, namespace, name))
}

// syncStopped waits for sync's pods to be gone before what sync wrote is deleted: a pod still
// terminating (with --member-credentials=current, whose credentials outlive its ServiceAccount)
// could write an import again.
func (o *Options) syncStopped(ctx context.Context, s *site) error {
	if !o.waiting() || !(o.SyncObjects || o.CRDs) {
		return nil
	}
	return o.gone(ctx, fmt.Sprintf("cluster %q: the pods of deployment %s/%s", s.conn.ID, names.SystemNamespace, install.Name),
		func(ctx context.Context) (bool, error) {
			l, err := s.conn.Dynamic.Resource(podsResource).Namespace(names.SystemNamespace).List(ctx, metav1.ListOptions{LabelSelector: install.SyncPodSelector})
			if err != nil {
				return false, err
			}
			return len(ourPods(l.Items)) == 0, nil
		})
}

// ourPods are the pods carrying our label among items.
func ourPods(items []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, p := range items {
		if names.IsManaged(p.GetLabels()) {
			out = append(out, p)
		}
	}
	return out
}

// failures is one error naming every cluster that failed, one line each; nil when none did.
func failures(sites []*site) error {
	var lines []string
	for _, s := range sites {
		if s.err != nil {
			lines = append(lines, s.err.Error())
		}
	}
	switch len(lines) {
	case 0:
		return nil
	case len(sites):
		return errors.New(strings.Join(lines, "\n"))
	}
	return fmt.Errorf("%s\n(the other clusters were cleaned; run uninstall again once these answer)", strings.Join(lines, "\n"))
}
