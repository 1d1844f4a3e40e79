// Package expose implements `kubectl mcs expose`, and the plan of objects that `unexpose` removes.
package expose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/crdschema"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// APIs --api accepts in Karmada mode.
const (
	APIMultiClusterService = "multiclusterservice"
	APIServiceExport       = "serviceexport"
)

var (
	long = templates.LongDesc(`
		Export a Service to the clusterset.

		Directly (the default), a ServiceExport is written in each cluster of --contexts where the
		Service exists, or in exactly the --providers. An MCS controller (kubectl mcs sync, or any
		other) then imports it everywhere.

		With --karmada, the --context cluster is a Karmada control plane: a MultiClusterService is
		written (--api=multiclusterservice), or the ServiceExport + ServiceImport and the
		PropagationPolicies of Karmada's multi-cluster service discovery guide
		(--api=serviceexport).

		Everything is checked before anything is written: a missing or ExternalName Service, an
		unreachable cluster or an object of the same name not created by kubectl-mcs fails the
		whole command and writes nothing.`)
	example = templates.Examples(`
		# Export demo/serve from every cluster that has it
		kubectl mcs expose serve -n demo --contexts=member1,member2,member3

		# Export it from member1 only
		kubectl mcs expose serve -n demo --contexts=member1,member2 --providers=member1

		# Karmada: a MultiClusterService served by member1 and consumed in member2
		kubectl mcs expose serve --karmada-context=karmada-apiserver --providers=member1 --consumers=member2

		# Karmada: the ServiceExport/ServiceImport flow, and place the Service and its Deployment too
		kubectl mcs expose serve --karmada --api=serviceexport --providers=member1 --consumers=member2 \
		    --propagate --workload=deployment/serve`)
)

// Options holds expose's (and unexpose's) flags and state.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
	Write       apply.Flags

	Service             string
	Namespace           string
	Providers           []string
	Consumers           []string
	ExportedLabels      []string
	ExportedAnnotations []string
	MCSAPIVersion       string

	Karmada        bool
	KarmadaContext string
	API            string
	Types          []string
	Ports          []string
	Propagate      bool
	Workload       string

	genericiooptions.IOStreams
}

// NewCmdExpose returns the expose command.
func NewCmdExpose(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "expose SERVICE",
		Short:   "Export a Service to the clusterset (ServiceExport, or Karmada MultiClusterService)",
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd, args))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	o.AddTargetFlags(cmd.Flags())
	apply.AddFlags(cmd, &o.Write)
	f := cmd.Flags()
	f.StringSliceVar(&o.Consumers, "consumers", nil, "Karmada: clusters that consume the service (default for MultiClusterService: all)")
	f.StringSliceVar(&o.ExportedLabels, "exported-labels", nil, "KEY=VALUE labels for the ServiceExport's spec.exportedLabels")
	f.StringSliceVar(&o.ExportedAnnotations, "exported-annotations", nil, "KEY=VALUE annotations for the ServiceExport's spec.exportedAnnotations")
	f.StringSliceVar(&o.Types, "type", []string{karmada.TypeCrossCluster}, "Karmada MultiClusterService types: CrossCluster or LoadBalancer")
	f.StringSliceVar(&o.Ports, "ports", nil, "Karmada MultiClusterService ports as NAME:PORT,...")
	f.BoolVar(&o.Propagate, "propagate", false, "Karmada: also write the PropagationPolicy that places the Service (and --workload) in the providers")
	f.StringVar(&o.Workload, "workload", "", "Karmada, with --propagate: the workload to place too, as KIND/NAME (e.g. deployment/serve)")
	return cmd
}

// AddTargetFlags registers the flags that say where the objects go, shared with unexpose.
func (o *Options) AddTargetFlags(f *pflag.FlagSet) {
	o.Clusterset.AddFlags(f)
	f.StringSliceVar(&o.Providers, "providers", nil, "Clusters that export the service (direct: cluster IDs of the clusterset, default every cluster that has the Service)")
	f.BoolVar(&o.Karmada, "karmada", false, "The --context cluster is a Karmada control plane: write Karmada objects there")
	f.StringVar(&o.KarmadaContext, "karmada-context", "", "Same as --karmada --context=CTX (karmadactl's flag)")
	f.StringVar(&o.API, "api", APIMultiClusterService, "Karmada: which API to use, multiclusterservice or serviceexport")
	f.StringVar(&o.MCSAPIVersion, "mcs-api-version", "", "multicluster.x-k8s.io version to write: v1beta1 or v1alpha1 (default: direct, what each cluster serves; Karmada, v1alpha1)")
}

// Complete fills in the service name, namespace and Karmada context.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	if err := o.Write.Complete(cmd); err != nil {
		return err
	}
	o.Service = args[0]
	if o.KarmadaContext != "" {
		o.Karmada = true
		o.ConfigFlags.Context = &o.KarmadaContext
	}
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	o.Namespace = ns
	return nil
}

// Validate checks the flags without contacting any cluster.
func (o *Options) Validate() error {
	if err := o.Write.Validate(); err != nil {
		return err
	}
	if errs := validation.IsDNS1035Label(o.Service); len(errs) > 0 {
		return fmt.Errorf("service %q: not a valid Service name: %s", o.Service, errs[0])
	}
	switch o.MCSAPIVersion {
	case "", mcsapi.V1alpha1, mcsapi.V1beta1:
	default:
		return fmt.Errorf("--mcs-api-version %q: must be v1beta1 or v1alpha1", o.MCSAPIVersion)
	}
	if _, err := mcsapi.ParseKeyValues("exported-labels", o.ExportedLabels); err != nil {
		return err
	}
	if _, err := mcsapi.ParseKeyValues("exported-annotations", o.ExportedAnnotations); err != nil {
		return err
	}
	if !o.Karmada {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--consumers", len(o.Consumers) > 0}, {"--ports", len(o.Ports) > 0}, {"--propagate", o.Propagate}, {"--workload", o.Workload != ""}} {
			if f.set {
				return fmt.Errorf("%s is a Karmada flag: add --karmada (or --karmada-context=CTX)", f.name)
			}
		}
		return nil
	}
	if o.API != APIMultiClusterService && o.API != APIServiceExport {
		return fmt.Errorf("--api %q: must be %s or %s", o.API, APIMultiClusterService, APIServiceExport)
	}
	if err := karmada.ValidateClusters("--providers", o.Providers); err != nil {
		return err
	}
	if err := karmada.ValidateClusters("--consumers", o.Consumers); err != nil {
		return err
	}
	if o.API == APIMultiClusterService && len(o.ExportedLabels)+len(o.ExportedAnnotations) > 0 {
		return fmt.Errorf("--exported-labels and --exported-annotations fill a ServiceExport: add --api=serviceexport")
	}
	if o.API == APIServiceExport && (len(o.Providers) == 0 || len(o.Consumers) == 0) {
		return fmt.Errorf("--api=serviceexport needs --providers and --consumers: its PropagationPolicies place the export in the providers and the import in the consumers")
	}
	if o.Propagate && len(o.Providers) == 0 {
		return fmt.Errorf("--propagate needs --providers: the PropagationPolicy places the Service in them")
	}
	if o.Workload != "" && !o.Propagate {
		return fmt.Errorf("--workload goes with --propagate")
	}
	if o.Workload != "" {
		if kind, name, ok := strings.Cut(o.Workload, "/"); !ok || kind == "" || name == "" {
			return fmt.Errorf("--workload %q: want KIND/NAME, e.g. deployment/serve", o.Workload)
		}
	}
	if o.API == APIMultiClusterService {
		ports, err := karmada.ParsePorts(o.Ports)
		if err != nil {
			return err
		}
		return o.mcsSpec(ports).Validate()
	}
	return nil
}

func (o *Options) mcsSpec(ports []karmada.Port) karmada.MCSSpec {
	return karmada.MCSSpec{Namespace: o.Namespace, Name: o.Service, Types: o.Types, Ports: ports, Providers: o.Providers, Consumers: o.Consumers}
}

// Run checks everything against the clusters, then writes.
func (o *Options) Run(ctx context.Context) error {
	items, err := o.Plan(ctx, false)
	if err != nil {
		return err
	}
	if err := apply.CheckOwnership(ctx, items); err != nil {
		return err
	}
	return o.Write.Apply(ctx, o.Out, items)
}

// Plan lists the objects expose writes. forDelete plans what unexpose removes: it does not need
// the Service to exist any more.
func (o *Options) Plan(ctx context.Context, forDelete bool) ([]apply.Item, error) {
	if o.Karmada {
		return o.planKarmada(ctx, forDelete)
	}
	return o.planDirect(ctx, forDelete)
}

func (o *Options) planDirect(ctx context.Context, forDelete bool) ([]apply.Item, error) {
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset}
	refs, err := loader.Refs(true)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	for _, p := range o.Providers {
		if !slices.Contains(ids, p) {
			return nil, fmt.Errorf("--providers: cluster %q is not in the clusterset (%s)", p, strings.Join(ids, ", "))
		}
	}
	members := loader.Connect(ctx, refs)
	if err := clusterset.FirstError(members); err != nil {
		return nil, err
	}
	labels, _ := mcsapi.ParseKeyValues("exported-labels", o.ExportedLabels)
	annotations, _ := mcsapi.ParseKeyValues("exported-annotations", o.ExportedAnnotations)
	var items []apply.Item
	for _, m := range members {
		named := slices.Contains(o.Providers, m.ID)
		if len(o.Providers) > 0 && !named {
			continue
		}
		if !forDelete {
			svc, err := getService(ctx, m.Client, m.ID, o.Namespace, o.Service)
			if err != nil {
				return nil, err
			}
			if svc == nil {
				if named {
					return nil, fmt.Errorf("cluster %q: service %s/%s not found", m.ID, o.Namespace, o.Service)
				}
				continue
			}
		}
		version := o.MCSAPIVersion
		if version == "" {
			if version, err = mcsapi.ServedVersion(m.Discovery); err != nil {
				if forDelete {
					continue // no CRDs, nothing of ours to remove
				}
				return nil, fmt.Errorf("cluster %q: %w", m.ID, err)
			}
		}
		se := mcsapi.ServiceExport(version, o.Namespace, o.Service, labels, annotations)
		if !forDelete { // unexpose sends no fields, only names
			schemas, err := loadSchemas(ctx, m.ID, m.Dynamic, version)
			if err != nil {
				return nil, err
			}
			if err := exportFits(m.ID, se, schemas.Export, labels, annotations); err != nil {
				return nil, err
			}
			schemas.Export.Prune(se.Object)
		}
		items = append(items, apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: mcsapi.GVR(version, mcsapi.ServiceExports), Object: se})
	}
	if len(items) == 0 && !forDelete {
		return nil, fmt.Errorf("service %s/%s not found in any cluster of the clusterset (%s)", o.Namespace, o.Service, strings.Join(ids, ", "))
	}
	return items, nil
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
		return nil, fmt.Errorf("cluster %q: service %s/%s is of type ExternalName, which cannot be exported (KEP-1645)", cluster, ns, name)
	}
	return svc, nil
}

func (o *Options) planKarmada(ctx context.Context, forDelete bool) ([]apply.Item, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cluster := o.controlPlaneName()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var svc *corev1.Service
	if !forDelete {
		if svc, err = getService(ctx, kc, cluster, o.Namespace, o.Service); err != nil {
			return nil, err
		}
		if svc == nil {
			return nil, fmt.Errorf("cluster %q: service %s/%s not found on the Karmada control plane", cluster, o.Namespace, o.Service)
		}
		if err := o.checkMembers(ctx, cluster, dyn); err != nil {
			return nil, err
		}
	}
	item := func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) apply.Item {
		return apply.Item{Cluster: cluster, Client: dyn, GVR: gvr, Object: obj}
	}
	version := o.MCSAPIVersion
	if version == "" {
		version = mcsapi.V1alpha1 // what Karmada's CRDs, webhook and controllers match on
	}
	var items []apply.Item
	if forDelete || o.API == APIMultiClusterService {
		ports, _ := karmada.ParsePorts(o.Ports)
		items = append(items, item(karmada.MultiClusterServices, o.mcsSpec(ports).MultiClusterService()))
	}
	if forDelete || o.API == APIServiceExport {
		labels, _ := mcsapi.ParseKeyValues("exported-labels", o.ExportedLabels)
		annotations, _ := mcsapi.ParseKeyValues("exported-annotations", o.ExportedAnnotations)
		se := mcsapi.ServiceExport(version, o.Namespace, o.Service, labels, annotations)
		si := mcsapi.ServiceImportFromService(version, orEmpty(svc, o.Namespace, o.Service))
		if !forDelete {
			// Karmada bundles the mcs-api v0.1.0 CRDs (no ServiceExport spec, one ServiceImport IP):
			// send only what the control plane's schema declares.
			schemas, err := loadSchemas(ctx, cluster, dyn, version)
			if err != nil {
				return nil, err
			}
			if err := exportFits(cluster, se, schemas.Export, labels, annotations); err != nil {
				return nil, err
			}
			schemas.Export.Prune(se.Object)
			schemas.Import.Prune(si.Object)
		}
		items = append(items, item(mcsapi.GVR(version, mcsapi.ServiceExports), se))
		items = append(items, item(karmada.PropagationPolicies, karmada.PropagationPolicy(o.Namespace, karmada.PolicyName(o.Service, "export"),
			[]karmada.Selector{{APIVersion: se.GetAPIVersion(), Kind: se.GetKind(), Name: o.Service}}, o.Providers)))
		items = append(items, item(mcsapi.GVR(version, mcsapi.ServiceImports), si))
		items = append(items, item(karmada.PropagationPolicies, karmada.PropagationPolicy(o.Namespace, karmada.PolicyName(o.Service, "import"),
			[]karmada.Selector{{APIVersion: si.GetAPIVersion(), Kind: si.GetKind(), Name: o.Service}}, o.Consumers)))
	}
	if forDelete || o.Propagate {
		selectors := []karmada.Selector{{APIVersion: "v1", Kind: "Service", Name: o.Service}}
		if o.Workload != "" && !forDelete {
			sel, err := o.workloadSelector()
			if err != nil {
				return nil, err
			}
			selectors = append(selectors, sel)
		}
		items = append(items, item(karmada.PropagationPolicies, karmada.PropagationPolicy(o.Namespace, karmada.PolicyName(o.Service, "workload"), selectors, o.Providers)))
	}
	return items, nil
}

// checkMembers refuses providers or consumers that are not member clusters of the control plane.
// Karmada itself accepts them: its webhook checks only the names, and a MultiClusterService whose
// only consumer is unknown reports ServiceApplied and EndpointSliceDispatched True while nothing
// is consumed anywhere. Where the Cluster API is not served (no karmada-aggregated-apiserver) or
// not readable, there is nothing to check against.
func (o *Options) checkMembers(ctx context.Context, cluster string, dyn dynamic.Interface) error {
	if len(o.Providers) == 0 && len(o.Consumers) == 0 {
		return nil
	}
	l, err := dyn.Resource(karmada.Clusters).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster %q: listing member clusters: %w", cluster, err)
	}
	var members []string
	for _, c := range l.Items {
		members = append(members, c.GetName())
	}
	slices.Sort(members)
	for _, f := range []struct {
		flag  string
		names []string
	}{{"--providers", o.Providers}, {"--consumers", o.Consumers}} {
		if unknown := karmada.UnknownClusters(f.names, members); len(unknown) > 0 {
			return fmt.Errorf("cluster %q: %s: %q is not a member cluster of this Karmada control plane (members: %s)",
				cluster, f.flag, unknown[0], strings.Join(members, ", "))
		}
	}
	return nil
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
func exportFits(cluster string, se *unstructured.Unstructured, s *crdschema.Schema, labels, annotations map[string]string) error {
	for _, f := range []struct {
		flag, field string
		n           int
	}{{"--exported-labels", "exportedLabels", len(labels)}, {"--exported-annotations", "exportedAnnotations", len(annotations)}} {
		if f.n > 0 && !s.Has("spec", f.field) {
			return fmt.Errorf("cluster %q: serviceexport.%s %s/%s: %s: the ServiceExport schema it serves (%s) has no spec.%s (an older mcs-api CRD); leave the flag out or upgrade that CRD",
				cluster, mcsapi.Group, se.GetNamespace(), se.GetName(), f.flag, se.GetAPIVersion(), f.field)
		}
	}
	return nil
}

// workloadSelector resolves KIND/NAME through the control plane's RESTMapper, as kubectl does.
func (o *Options) workloadSelector() (karmada.Selector, error) {
	kind, name, _ := strings.Cut(o.Workload, "/")
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return karmada.Selector{}, err
	}
	gvk, err := mapper.KindFor(schema.ParseGroupResource(kind).WithVersion(""))
	if err != nil {
		return karmada.Selector{}, fmt.Errorf("cluster %q: --workload %q: unknown kind %q: %w", o.controlPlaneName(), o.Workload, kind, err)
	}
	return karmada.Selector{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name}, nil
}

// controlPlaneName is how output and errors name the Karmada control plane: its context.
func (o *Options) controlPlaneName() string {
	if c := o.ConfigFlags.Context; c != nil && *c != "" {
		return *c
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	return "karmada"
}

func orEmpty(svc *corev1.Service, ns, name string) *corev1.Service {
	if svc != nil {
		return svc
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
