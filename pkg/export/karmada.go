package export

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// controlPlane is the Karmada control plane the --context cluster is.
type controlPlane struct {
	name string
	dyn  dynamic.Interface
	kube kubernetes.Interface
}

func (t *Target) controlPlane() (*controlPlane, error) {
	cfg, err := t.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{name: clusterset.ControlPlaneName(t.ConfigFlags)}
	if cp.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if cp.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return cp, nil
}

// version is the mcs-api version written on a control plane: v1alpha1 unless asked otherwise,
// what Karmada's CRDs, webhook and controllers match on.
func (t *Target) version() string {
	if t.MCSAPIVersion != "" {
		return t.MCSAPIVersion
	}
	return mcsapi.V1alpha1
}

// planKarmada returns the objects of the export on the control plane, and warnings: the members
// where Karmada may not place them (s.Force: where it would not either).
func (s *Spec) planKarmada(ctx context.Context) ([]apply.Item, []error, error) {
	cp, err := s.controlPlane()
	if err != nil {
		return nil, nil, err
	}
	svc, err := getService(ctx, cp.kube, cp.name, s.Namespace, s.Service)
	if err != nil {
		return nil, nil, err
	}
	if svc == nil {
		return nil, nil, fmt.Errorf("cluster %q: service %s/%s not found on the Karmada control plane", cp.name, s.Namespace, s.Service)
	}
	members, err := s.checkMembers(ctx, cp)
	if err != nil {
		return nil, nil, err
	}
	var schemas mcsapi.Schemas
	if s.API == APIServiceExport {
		// Karmada bundles the mcs-api v0.1.0 CRDs (no ServiceExport spec, one ServiceImport IP):
		// send only what the control plane's schema declares.
		if schemas, err = loadSchemas(ctx, cp.name, cp.dyn, s.version()); err != nil {
			return nil, nil, err
		}
		if err := s.exportFits(cp.name, s.version(), s.Service, schemas.Export); err != nil {
			return nil, nil, err
		}
	}
	var workload *karmada.Selector
	if s.Propagate && s.Workload.Kind != "" {
		if workload, err = s.workloadSelector(cp.name); err != nil {
			return nil, nil, err
		}
	}
	objs := s.objects(svc, schemas, workload, false)
	warnings, err := s.checkAPIs(members, objs)
	if err != nil {
		return nil, warnings, err
	}
	return cp.items(objs), warnings, nil
}

// checkAPIs refuses, before anything is written, an export that Karmada could never place: a
// provider or consumer whose Cluster says it does not serve an API that one of objs sends there
// (ServiceExport and ServiceImport with --api=serviceexport, the Service and --workload with
// --propagate, EndpointSlices and the Service for a MultiClusterService). With s.Force, or where
// Karmada has not collected every API the member serves, each is a warning instead.
func (s *Spec) checkAPIs(members map[string]karmada.MemberAPIs, objs []object) ([]error, error) {
	var reqs []karmada.Requirement
	for _, o := range objs {
		switch o.gvr {
		case karmada.PropagationPolicies:
			reqs = append(reqs, karmada.PolicyRequirements(o.obj)...)
		case karmada.MultiClusterServices:
			// Karmada's controllers place the Service, and send EndpointSlices, to both.
			named := slices.Concat(s.Providers, s.Consumers)
			what := "MultiClusterService " + o.obj.GetName() + " sends them there"
			reqs = append(reqs, karmada.Requirement{GroupVersion: "v1", Kind: "Service", Clusters: named, For: what},
				karmada.Requirement{GroupVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Clusters: named, For: what})
		}
	}
	var warnings []error
	var refusals []karmada.Unserved
	var lines []string
	for _, u := range karmada.CheckAPIs(members, reqs) {
		switch {
		case u.Unknown:
			warnings = append(warnings, errors.New(u.String()))
		case s.Force:
			warnings = append(warnings, fmt.Errorf("%s: written anyway (--force), Karmada will not place it there until it does", u.String()))
		default:
			refusals, lines = append(refusals, u), append(lines, u.String())
		}
	}
	if len(refusals) == 0 {
		return warnings, nil
	}
	return warnings, fmt.Errorf("nothing written: Karmada's scheduler places an object only in members whose Cluster lists its API "+
		"(status.apiEnablements), and would never place these:\n  %s\n%s --force writes anyway.",
		strings.Join(lines, "\n  "), strings.Join(karmada.Fixes(refusals), " "))
}

func (t *Target) ownedKarmada(context.Context) ([]apply.Item, error) {
	cp, err := t.controlPlane()
	if err != nil {
		return nil, err
	}
	s := &Spec{Target: *t}
	return cp.items(s.objects(nil, mcsapi.Schemas{}, nil, true)), nil
}

type object struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

func (cp *controlPlane) items(objs []object) []apply.Item {
	items := make([]apply.Item, len(objs))
	for i, o := range objs {
		items[i] = apply.Item{Cluster: cp.name, Client: cp.dyn, GVR: o.gvr, Object: o.obj}
	}
	return items
}

// objects lists, in the order they are written, the objects of an export on a control plane:
// with all, every one an export of this Service can own (what unexpose removes, by name), else
// those s asks for. svc fills the ServiceImport (nil: names only); schemas prune the mcs-api
// objects; workload joins the Service in the placement policy.
func (s *Spec) objects(svc *corev1.Service, schemas mcsapi.Schemas, workload *karmada.Selector, all bool) []object {
	var objs []object
	if all || s.API == APIMultiClusterService {
		objs = append(objs, object{karmada.MultiClusterServices, s.mcsSpec().MultiClusterService()})
	}
	if all || s.API == APIServiceExport {
		if svc == nil {
			svc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Service}}
		}
		se := mcsapi.ServiceExport(s.version(), s.Namespace, s.Service, s.Labels, s.Annotations)
		si := mcsapi.ServiceImportFromService(s.version(), svc)
		schemas.Export.Prune(se.Object)
		schemas.Import.Prune(si.Object)
		objs = append(objs,
			object{mcsapi.GVR(s.version(), mcsapi.ServiceExports), se},
			object{karmada.PropagationPolicies, s.policy("export", []karmada.Selector{selectorOf(se)}, s.Providers)},
			object{mcsapi.GVR(s.version(), mcsapi.ServiceImports), si},
			object{karmada.PropagationPolicies, s.policy("import", []karmada.Selector{selectorOf(si)}, s.Consumers)})
	}
	if all || s.Propagate {
		selectors := []karmada.Selector{{APIVersion: "v1", Kind: "Service", Name: s.Service}}
		if workload != nil {
			selectors = append(selectors, *workload)
		}
		objs = append(objs, object{karmada.PropagationPolicies, s.policy("workload", selectors, s.Providers)})
	}
	return objs
}

func (s *Spec) policy(purpose string, selectors []karmada.Selector, clusters []string) *unstructured.Unstructured {
	return karmada.PropagationPolicy(s.Namespace, karmada.PolicyName(s.Service, purpose), selectors, clusters)
}

func selectorOf(u *unstructured.Unstructured) karmada.Selector {
	return karmada.Selector{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName()}
}

// checkMembers refuses providers or consumers that are not member clusters of the control plane,
// and returns what the named ones serve (nil when there is nothing to check against).
// Karmada itself accepts them: its webhook checks only the names, and a MultiClusterService whose
// only consumer is unknown reports ServiceApplied and EndpointSliceDispatched True while nothing
// is consumed anywhere. Where the Cluster API is not served (no karmada-aggregated-apiserver) or
// not readable, there is nothing to check against.
func (s *Spec) checkMembers(ctx context.Context, cp *controlPlane) (map[string]karmada.MemberAPIs, error) {
	if len(s.Providers) == 0 && len(s.Consumers) == 0 {
		return nil, nil
	}
	l, err := cp.dyn.Resource(karmada.Clusters).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %q: listing member clusters: %w", cp.name, err)
	}
	var members []string
	apis := map[string]karmada.MemberAPIs{}
	for i := range l.Items {
		members = append(members, l.Items[i].GetName())
		apis[l.Items[i].GetName()] = karmada.MemberAPIsOf(&l.Items[i])
	}
	slices.Sort(members)
	for _, f := range []struct {
		flag  string
		names []string
	}{{"--providers", s.Providers}, {"--consumers", s.Consumers}} {
		if unknown := karmada.UnknownClusters(f.names, members); len(unknown) > 0 {
			return nil, fmt.Errorf("cluster %q: %s: %q is not a member cluster of this Karmada control plane (members: %s)",
				cp.name, f.flag, unknown[0], strings.Join(members, ", "))
		}
	}
	return apis, nil
}

// workloadSelector resolves --workload's kind through the control plane's RESTMapper, as kubectl
// does.
func (s *Spec) workloadSelector(cluster string) (*karmada.Selector, error) {
	mapper, err := s.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	gvk, err := mapper.KindFor(schema.ParseGroupResource(s.Workload.Kind).WithVersion(""))
	if err != nil {
		return nil, fmt.Errorf("cluster %q: --workload %q: unknown kind %q: %w", cluster, s.Workload.Kind+"/"+s.Workload.Name, s.Workload.Kind, err)
	}
	return &karmada.Selector{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: s.Workload.Name}, nil
}
