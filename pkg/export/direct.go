package export

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// Plan lists the objects expose writes, checked against the clusters: the Service exists (and is
// not ExternalName) where it is exported, and every object fits the schema its cluster serves.
// With a selector (or all), every selected Service is checked so before anything is written, and
// a Service that cannot be exported in a cluster (ExternalName) is skipped there, unless Strict:
// then it fails the plan, as a named Service does. With --karmada, skipped are the members where
// Karmada may not place the export. Each of skipped is a warning line of its own.
func (s *Spec) Plan(ctx context.Context) (items []apply.Item, skipped []error, err error) {
	if s.Karmada {
		return s.planKarmada(ctx)
	}
	members, ids, err := s.members(ctx)
	if err != nil {
		return nil, nil, err
	}
	services := []string{s.Service}
	if s.Selects() {
		if services, skipped, err = s.selectServices(ctx, members, ids); err != nil {
			return nil, skipped, err
		}
	}
	schemas := map[string]memberSchemas{}
	for _, name := range services {
		its, skips, err := s.planService(ctx, members, ids, name, schemas)
		if err != nil {
			return nil, nil, err
		}
		items, skipped = append(items, its...), append(skipped, skips...)
	}
	if len(items) == 0 {
		return nil, skipped, fmt.Errorf("%s in namespace %s: no Service that can be exported in any cluster of the clusterset (%s)", s.selectionFlag(), s.Namespace, strings.Join(ids, ", "))
	}
	return items, skipped, nil
}

// NotExportableError is a Service that exists but cannot be exported (KEP-1645: ExternalName).
type NotExportableError struct {
	Cluster, Namespace, Name string
}

func (e *NotExportableError) Error() string {
	return fmt.Sprintf("cluster %q: service %s/%s is of type ExternalName, which cannot be exported (KEP-1645)", e.Cluster, e.Namespace, e.Name)
}

// memberSchemas is what a member serves, read once however many services are planned.
type memberSchemas struct {
	version string
	schemas mcsapi.Schemas
}

// planService is the ServiceExport of one Service in each member that has it; selected (-l,
// --all) without Strict, the members where it cannot be exported are skipped.
func (s *Spec) planService(ctx context.Context, members []*clusterset.Connection, ids []string, name string, cache map[string]memberSchemas) ([]apply.Item, []error, error) {
	var items []apply.Item
	var skipped []error
	for _, m := range members {
		svc, err := getService(ctx, m.Client, m.ID, s.Namespace, name)
		var notExportable *NotExportableError
		if errors.As(err, &notExportable) && s.Selects() && !s.Strict {
			skipped = append(skipped, fmt.Errorf("%w; skipped (--strict fails instead)", err))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if svc == nil {
			if len(s.Providers) > 0 {
				return nil, nil, fmt.Errorf("cluster %q: service %s/%s not found", m.ID, s.Namespace, name)
			}
			continue
		}
		ms, ok := cache[m.ID]
		if !ok {
			if ms.version, err = s.versionIn(m); err != nil {
				return nil, nil, fmt.Errorf("cluster %q: %w", m.ID, err)
			}
			if ms.schemas, err = loadSchemas(ctx, m.ID, m.Dynamic, ms.version); err != nil {
				return nil, nil, err
			}
			cache[m.ID] = ms
		}
		se := mcsapi.ServiceExport(ms.version, s.Namespace, name, s.Labels, s.Annotations)
		s.recordChoice(se)
		if err := s.exportFits(m.ID, ms.version, name, ms.schemas.Export); err != nil {
			return nil, nil, err
		}
		ms.schemas.Export.Prune(se.Object)
		items = append(items, apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: mcsapi.GVR(ms.version, mcsapi.ServiceExports), Object: se})
	}
	if len(items) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("service %s/%s not found in any cluster of the clusterset (%s)", s.Namespace, name, strings.Join(ids, ", "))
	}
	return items, skipped, nil
}

// LeftOutError is a Service a selection (-l, --all) leaves out although it could be exported by
// name: default/kubernetes.
type LeftOutError struct {
	Namespace, Name, Selection string
}

func (e *LeftOutError) Error() string {
	return fmt.Sprintf("service %s/%s is each cluster's own API server, which %s leaves out (name it to export it)", e.Namespace, e.Name, e.Selection)
}

// selectServices lists, by name, the Services of the namespace that the selector (or all) picks
// in any of the members, leaving out the derived Services sync writes (they are ours, and
// exporting one would export an import) and, with a warning, default/kubernetes.
func (s *Spec) selectServices(ctx context.Context, members []*clusterset.Connection, ids []string) ([]string, []error, error) {
	seen := map[string]bool{}
	var leftOut []error
	for _, m := range members {
		l, err := m.Client.CoreV1().Services(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.Selector})
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %q: listing the Services of namespace %s: %w", m.ID, s.Namespace, err)
		}
		for _, svc := range l.Items {
			switch {
			case names.IsManaged(svc.Labels):
			case names.IsAPIServer(svc.Namespace, svc.Name):
				if leftOut == nil {
					leftOut = []error{&LeftOutError{Namespace: svc.Namespace, Name: svc.Name, Selection: s.selectionFlag()}}
				}
			default:
				seen[svc.Name] = true
			}
		}
	}
	if len(seen) == 0 {
		what := "no Service"
		if s.Selector != "" {
			what = fmt.Sprintf("no Service matching -l %s", s.Selector)
		}
		return nil, leftOut, fmt.Errorf("%s in namespace %s in any cluster of the clusterset (%s)", what, s.Namespace, strings.Join(ids, ", "))
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, leftOut, nil
}

// Owned lists every object an export of the target can own, whatever it was exposed with: what
// unexpose removes. Only names count, and the Service need not exist any more.
func (t *Target) Owned(ctx context.Context) ([]apply.Item, error) {
	if t.Karmada {
		return t.ownedKarmada(ctx)
	}
	members, _, err := t.members(ctx)
	if err != nil {
		return nil, err
	}
	var items []apply.Item
	for _, m := range members {
		version, err := t.versionIn(m)
		if err != nil {
			continue // no CRDs, nothing of ours to remove
		}
		se := mcsapi.ServiceExport(version, t.Namespace, t.Service, nil, nil)
		items = append(items, apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: mcsapi.GVR(version, mcsapi.ServiceExports), Object: se})
	}
	return items, nil
}

// versionIn is the mcs-api version written in a member: the one asked for, else the one it
// serves.
func (t *Target) versionIn(m *clusterset.Connection) (string, error) {
	if t.MCSAPIVersion != "" {
		return t.MCSAPIVersion, nil
	}
	return mcsapi.ServedVersion(m.Discovery)
}

// members connects the clusterset, all of it reachable, and returns the members in --providers
// (every member without it) and the IDs of the whole clusterset.
func (t *Target) members(ctx context.Context) ([]*clusterset.Connection, []string, error) {
	loader := &clusterset.Loader{ConfigFlags: t.ConfigFlags, Flags: &t.Clusterset}
	refs, err := loader.Refs(true)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	if err := checkProviders(t.Providers, ids); err != nil {
		return nil, nil, err
	}
	all := loader.Connect(ctx, refs)
	if err := clusterset.FirstError(all); err != nil {
		return nil, nil, err
	}
	var members []*clusterset.Connection
	for _, m := range all {
		if len(t.Providers) == 0 || slices.Contains(t.Providers, m.ID) {
			members = append(members, m)
		}
	}
	return members, ids, nil
}

// getService returns the Service, nil if it does not exist, or an error for an ExternalName one.
func getService(ctx context.Context, c kubernetes.Interface, cluster, ns, name string) (*corev1.Service, error) {
	svc, err := c.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %q: service %s/%s: %w", cluster, ns, name, err)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, &NotExportableError{Cluster: cluster, Namespace: ns, Name: name}
	}
	return svc, nil
}

// loadSchemas reads the ServiceExport/ServiceImport schemas a cluster serves in version. Where
// reading CRDs is forbidden, the schemas stay nil (everything declared): the apiserver's strict
// validation still refuses what its schema lacks, only later and less clearly.
func loadSchemas(ctx context.Context, cluster string, dyn dynamic.Interface, version string) (mcsapi.Schemas, error) {
	s, err := mcsapi.LoadSchemas(ctx, dyn, version)
	switch {
	case apierrors.IsForbidden(err):
		return mcsapi.Schemas{}, nil
	case err != nil:
		return mcsapi.Schemas{}, fmt.Errorf("cluster %q: %w", cluster, err)
	}
	return s, nil
}

// exportFits refuses exported labels or annotations that the served ServiceExport schema cannot
// hold: pruning them would export the service without what was asked for.
func (s *Spec) exportFits(cluster, version, service string, schema *crdschema.Schema) error {
	for _, f := range []struct {
		flag, field string
		n           int
	}{{"--exported-labels", "exportedLabels", len(s.Labels)}, {"--exported-annotations", "exportedAnnotations", len(s.Annotations)}} {
		if f.n > 0 && !schema.Has("spec", f.field) {
			return fmt.Errorf("cluster %q: serviceexport.%s %s/%s: %s: the ServiceExport schema it serves (%s/%s) has no spec.%s (an older mcs-api CRD); leave the flag out or upgrade that CRD",
				cluster, mcsapi.Group, s.Namespace, service, f.flag, mcsapi.Group, version, f.field)
		}
	}
	return nil
}
