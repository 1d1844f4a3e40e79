// Package export holds what an export of a Service is and the objects it owns: the
// ServiceExports of a direct export in the clusters of a clusterset, or the Karmada objects of one
// on a control plane. `expose` plans what it writes here and `unexpose` what it removes, so that
// the two always agree on which objects belong to an export.
package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// APIs --api accepts in Karmada mode.
const (
	APIMultiClusterService = "multiclusterservice"
	APIServiceExport       = "serviceexport"
)

// Target is where an export is: the Service, the clusters that export it, and how to reach them.
// expose and unexpose share it.
type Target struct {
	Namespace, Service string
	// Providers are the exporting clusters: cluster IDs of the clusterset, or Karmada member
	// clusters. Empty: every cluster that has the Service (direct) or every member (Karmada).
	Providers []string
	// MCSAPIVersion is the multicluster.x-k8s.io version to write; empty: what each cluster
	// serves (direct), v1alpha1 (Karmada).
	MCSAPIVersion string
	// Karmada says the --context cluster is a Karmada control plane.
	Karmada bool

	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
}

// Spec is an export as expose writes it: where, and what its objects say.
type Spec struct {
	Target
	API                 string
	Consumers           []string
	Labels, Annotations map[string]string
	Types               []string
	Ports               []karmada.Port
	Propagate           bool
	// Workload is --workload's KIND and NAME; Kind empty when not given.
	Workload struct{ Kind, Name string }
	// Selector (-l) or All (--all) select the Services of the namespace instead of Service.
	Selector string
	All      bool
	// Strict: a selected Service that cannot be exported fails the command instead of being
	// skipped with a warning.
	Strict bool
	// Force (Karmada): write even where a member does not serve an API the export sends there.
	Force bool
	// TrafficDistribution (direct): names.PreferSameCluster, recorded on every ServiceExport
	// written; "" records none (and an apply removes one recorded before).
	TrafficDistribution string
}

// Selects says whether the Services are selected (-l, --all) rather than named.
func (s *Spec) Selects() bool { return s.Selector != "" || s.All }

// TargetFlags are the flags that say where an export is, shared by expose and unexpose.
type TargetFlags struct {
	Clusterset    clusterset.Flags
	Karmada       clusterset.KarmadaFlags
	Providers     []string
	API           string
	MCSAPIVersion string
}

// AddFlags registers --contexts, --providers, --karmada, --karmada-context, --api and
// --mcs-api-version.
func (f *TargetFlags) AddFlags(fs *pflag.FlagSet) {
	f.Clusterset.AddFlags(fs)
	fs.StringSliceVar(&f.Providers, "providers", nil, "Clusters that export the service (direct: cluster IDs of the clusterset, default every cluster that has the Service)")
	f.Karmada.AddFlags(fs, "write Karmada objects there")
	fs.StringVar(&f.API, "api", APIMultiClusterService, "Karmada: which API to use, multiclusterservice or serviceexport")
	fs.StringVar(&f.MCSAPIVersion, "mcs-api-version", "", "multicluster.x-k8s.io version to write: v1beta1 or v1alpha1 (default: direct, what each cluster serves; Karmada, v1alpha1)")
}

// ToTarget resolves the flags for SERVICE: --karmada-context, the namespace of the kubeconfig or
// -n, and the version asked for.
func (f *TargetFlags) ToTarget(cf *genericclioptions.ConfigFlags, service string) (Target, error) {
	switch f.MCSAPIVersion {
	case "", mcsapi.V1alpha1, mcsapi.V1beta1:
	default:
		return Target{}, fmt.Errorf("--mcs-api-version %q: must be v1beta1 or v1alpha1", f.MCSAPIVersion)
	}
	if err := f.Karmada.Complete(cf); err != nil {
		return Target{}, err
	}
	ns, _, err := cf.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return Target{}, err
	}
	return Target{Namespace: ns, Service: service, Providers: f.Providers, MCSAPIVersion: f.MCSAPIVersion,
		Karmada: f.Karmada.Enabled, ConfigFlags: cf, Clusterset: f.Clusterset}, nil
}

// Validate checks an export without contacting any cluster.
func (s *Spec) Validate() error {
	if err := s.validateSelection(); err != nil {
		return err
	}
	if err := s.validateChoice(); err != nil {
		return err
	}
	if !s.Karmada {
		return nil // the Karmada-only flags are refused as they are read
	}
	if s.API != APIMultiClusterService && s.API != APIServiceExport {
		return fmt.Errorf("--api %q: must be %s or %s", s.API, APIMultiClusterService, APIServiceExport)
	}
	if err := karmada.ValidateClusters("--providers", s.Providers); err != nil {
		return err
	}
	if err := karmada.ValidateClusters("--consumers", s.Consumers); err != nil {
		return err
	}
	if s.API == APIMultiClusterService && len(s.Labels)+len(s.Annotations) > 0 {
		return fmt.Errorf("--exported-labels and --exported-annotations fill a ServiceExport: add --api=serviceexport")
	}
	if s.API == APIServiceExport && (len(s.Providers) == 0 || len(s.Consumers) == 0) {
		return fmt.Errorf("--api=serviceexport needs --providers and --consumers: its PropagationPolicies place the export in the providers and the import in the consumers")
	}
	if s.Propagate && len(s.Providers) == 0 {
		return fmt.Errorf("--propagate needs --providers: the PropagationPolicy places the Service in them")
	}
	if s.Workload.Kind != "" && !s.Propagate {
		return fmt.Errorf("--workload goes with --propagate")
	}
	if s.API == APIMultiClusterService {
		return s.mcsSpec().Validate()
	}
	return nil
}

// ParseWorkload reads --workload's KIND/NAME.
func ParseWorkload(s string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" {
		return "", "", fmt.Errorf("--workload %q: want KIND/NAME, e.g. deployment/serve", s)
	}
	return kind, name, nil
}

func (s *Spec) mcsSpec() karmada.MCSSpec {
	return karmada.MCSSpec{Namespace: s.Namespace, Name: s.Service, Types: s.Types, Ports: s.Ports, Providers: s.Providers, Consumers: s.Consumers}
}

// checkProviders refuses --providers that are not cluster IDs of the clusterset.
func checkProviders(providers, ids []string) error {
	for _, p := range providers {
		if !slices.Contains(ids, p) {
			return fmt.Errorf("--providers: cluster %q is not in the clusterset (%s)", p, strings.Join(ids, ", "))
		}
	}
	return nil
}

// validateSelection: one SERVICE, or -l, or --all, as kubectl's resource commands take them.
func (s *Spec) validateSelection() error {
	switch {
	case s.Selector != "" && s.All:
		return fmt.Errorf("--all and -l/--selector select in two ways: give one")
	case s.Selects() && s.Service != "":
		return fmt.Errorf("service %q and %s select in two ways: give a SERVICE or the flag", s.Service, s.selectionFlag())
	case s.Strict && !s.Selects():
		return fmt.Errorf("--strict goes with -l or --all: a named Service that cannot be exported always fails")
	case s.Selects() && s.Karmada:
		return fmt.Errorf("%s selects Services in the clusters of --contexts; with --karmada give one SERVICE", s.selectionFlag())
	case s.Selector != "":
		if _, err := labels.Parse(s.Selector); err != nil {
			return fmt.Errorf("-l %q: %w", s.Selector, err)
		}
		return nil
	case s.All:
		return nil
	case s.Service == "":
		return fmt.Errorf("give a SERVICE, -l SELECTOR or --all")
	}
	if errs := validation.IsDNS1035Label(s.Service); len(errs) > 0 {
		return fmt.Errorf("service %q: not a valid Service name: %s", s.Service, errs[0])
	}
	return nil
}

func (s *Spec) selectionFlag() string {
	if s.All {
		return "--all"
	}
	return "-l " + s.Selector
}
