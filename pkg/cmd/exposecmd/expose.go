// Package expose implements `kubectl mcs expose`.
package exposecmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/export"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/karmada"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

var (
	long = templates.LongDesc(`
		Export a Service to the clusterset.

		Directly (the default), a ServiceExport is written in each cluster of --contexts where the
		Service exists, or in exactly the --providers. An MCS controller (kubectl mcs sync, or any
		other) then imports it everywhere. The clusterset is --contexts, else
		$KUBECTL_MCS_CONTEXTS, else the --context cluster alone; it is never guessed.

		With --karmada, the --context cluster is a Karmada control plane: a MultiClusterService is
		written (--api=multiclusterservice), or the ServiceExport + ServiceImport and the
		PropagationPolicies of Karmada's multi-cluster service discovery guide
		(--api=serviceexport). Karmada's scheduler places an object only in members whose Cluster
		lists its API in status.apiEnablements; a provider or consumer that does not serve what is
		sent there (the mcs-api CRDs: kubectl mcs init) fails the command, naming the member and the
		API, and nothing is written (--force writes anyway). A member whose APIs Karmada has not
		collected yet is a warning.

		-l SELECTOR or --all export, instead of one SERVICE, every Service of the namespace that
		matches (or every one) in any cluster of the clusterset, leaving out the derived Services
		sync writes and, with a warning, default/kubernetes (each cluster's own API server).

		Everything is checked, for every Service, before anything is written: a missing or
		ExternalName Service, an unreachable cluster or an object of the same name not created by
		kubectl-mcs fails the whole command and writes nothing. With -l or --all, a selected
		Service that cannot be exported (ExternalName) is skipped instead, with one warning
		naming it and the cluster, and the rest are exported; --strict fails then too.

		--traffic-distribution=PreferSameCluster records on each ServiceExport written (narrow
		them with --providers) that its cluster prefers its own endpoints: sync hints that
		cluster's copies so that kube-proxy uses its own ready endpoints while one exists and
		every cluster's once none does. Exposing again without the flag removes the choice, as
		unexpose does.`)
	example = templates.Examples(`
		# Export demo/serve from every cluster that has it
		kubectl mcs expose serve -n demo --contexts=member1,member2,member3

		# Export every Service labelled tier=backend in demo
		kubectl mcs expose -l tier=backend -n demo --contexts=member1,member2,member3

		# Export it from member1 only
		kubectl mcs expose serve -n demo --contexts=member1,member2 \
		    --providers=member1

		# member2 keeps its traffic on its own endpoints while it has a ready one
		kubectl mcs expose serve -n demo --contexts=member1,member2 \
		    --providers=member2 --traffic-distribution=PreferSameCluster

		# Karmada: a MultiClusterService served by member1 and consumed in member2
		kubectl mcs expose serve --karmada-context=karmada-apiserver \
		    --providers=member1 --consumers=member2

		# Karmada: the ServiceExport/ServiceImport flow, and place the Service and its Deployment too
		kubectl mcs expose serve --karmada --api=serviceexport \
		    --providers=member1 --consumers=member2 \
		    --propagate --workload=deployment/serve`)
)

// Flags are expose's flags as given on the command line.
type Flags struct {
	Target              export.TargetFlags
	Write               apply.Flags
	Consumers           []string
	ExportedLabels      []string
	ExportedAnnotations []string
	Types               []string
	Ports               []string
	Propagate           bool
	Workload            string
	Selector            string
	All                 bool
	Strict              bool
	Force               bool
	TrafficDistribution string
}

// Options is expose parsed: the export to write and how.
type Options struct {
	Spec  export.Spec
	Write apply.Flags
	genericiooptions.IOStreams
}

// NewCmdExpose returns the expose command.
func NewCmdExpose(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	f := &Flags{}
	cmd := &cobra.Command{
		Use:     "expose [SERVICE] [-l SELECTOR | --all]",
		Short:   "Export a Service to the clusterset (ServiceExport, or Karmada MultiClusterService)",
		Long:    long,
		Example: example,
		Args:    f.args,
		Run: func(cmd *cobra.Command, args []string) {
			service := ""
			if len(args) == 1 {
				service = args[0]
			}
			o, err := f.ToOptions(cmd, flags, service, streams)
			cmdutil.CheckErr(err)
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	f.AddFlags(cmd)
	return cmd
}

// args is a usage error, as kubectl's: one SERVICE, or -l or --all instead of it.
func (f *Flags) args(cmd *cobra.Command, args []string) error {
	if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
		return err
	}
	if len(args) == 0 && f.Selector == "" && !f.All {
		return errors.New("give a SERVICE, -l SELECTOR or --all")
	}
	return nil
}

// AddFlags registers expose's flags.
func (f *Flags) AddFlags(cmd *cobra.Command) {
	f.Target.AddFlags(cmd.Flags())
	apply.AddFlags(cmd, &f.Write)
	fs := cmd.Flags()
	fs.StringSliceVar(&f.Consumers, "consumers", nil, "Karmada: clusters that consume the service (default for MultiClusterService: all)")
	fs.StringSliceVar(&f.ExportedLabels, "exported-labels", nil, "KEY=VALUE labels for the ServiceExport's spec.exportedLabels")
	fs.StringSliceVar(&f.ExportedAnnotations, "exported-annotations", nil, "KEY=VALUE annotations for the ServiceExport's spec.exportedAnnotations")
	fs.StringSliceVar(&f.Types, "type", []string{karmada.TypeCrossCluster}, "Karmada MultiClusterService types: CrossCluster or LoadBalancer")
	fs.StringSliceVar(&f.Ports, "ports", nil, "Karmada MultiClusterService ports as NAME:PORT,...")
	fs.BoolVar(&f.Propagate, "propagate", false, "Karmada: also write the PropagationPolicy that places the Service (and --workload) in the providers")
	fs.StringVar(&f.Workload, "workload", "", "Karmada, with --propagate: the workload to place too, as KIND/NAME (e.g. deployment/serve)")
	fs.StringVarP(&f.Selector, "selector", "l", "", "Export every Service of the namespace matching this label selector (e.g. -l tier=backend), instead of one SERVICE")
	fs.BoolVar(&f.All, "all", false, "Export every Service of the namespace (but the derived Services sync writes), instead of one SERVICE")
	fs.BoolVar(&f.Force, "force", false, "Karmada: write even where a provider or consumer does not serve an API the export sends there (Karmada places it once the member does)")
	fs.StringVar(&f.TrafficDistribution, "traffic-distribution", "", "PreferSameCluster: this export's clusters send the service's traffic to their own ready endpoints while one exists, every cluster's otherwise (zone hints on their copies); empty or left out: no preference")
	fs.BoolVar(&f.Strict, "strict", false, "With -l or --all: fail, writing nothing, when a selected Service cannot be exported (ExternalName) instead of skipping it with a warning")
}

// ToOptions parses the flags, once, into the export: the namespace, --karmada-context, the
// KEY=VALUE, NAME:PORT and KIND/NAME values. Flags that only Karmada reads are refused without
// --karmada.
func (f *Flags) ToOptions(cmd *cobra.Command, cf *genericclioptions.ConfigFlags, service string, streams genericiooptions.IOStreams) (*Options, error) {
	o := &Options{Write: f.Write, IOStreams: streams}
	if err := o.Write.Complete(cmd); err != nil {
		return nil, err
	}
	t, err := f.Target.ToTarget(cf, service)
	if err != nil {
		return nil, err
	}
	s := export.Spec{Target: t, API: f.Target.API, Consumers: f.Consumers, Types: f.Types, Propagate: f.Propagate, Selector: f.Selector, All: f.All, Strict: f.Strict, Force: f.Force,
		TrafficDistribution: f.TrafficDistribution}
	if s.Labels, err = mcsapi.ParseKeyValues("exported-labels", f.ExportedLabels); err != nil {
		return nil, err
	}
	if s.Annotations, err = mcsapi.ParseKeyValues("exported-annotations", f.ExportedAnnotations); err != nil {
		return nil, err
	}
	if !s.Karmada {
		for _, k := range []struct {
			name string
			set  bool
		}{{"--consumers", len(f.Consumers) > 0}, {"--ports", len(f.Ports) > 0}, {"--propagate", f.Propagate}, {"--workload", f.Workload != ""}, {"--force", f.Force}} {
			if k.set {
				return nil, fmt.Errorf("%s is a Karmada flag: add --karmada (or --karmada-context=CTX)", k.name)
			}
		}
	}
	if f.Workload != "" {
		if s.Workload.Kind, s.Workload.Name, err = export.ParseWorkload(f.Workload); err != nil {
			return nil, err
		}
	}
	if s.API == export.APIMultiClusterService { // only a MultiClusterService has ports
		if s.Ports, err = karmada.ParsePorts(f.Ports); err != nil {
			return nil, err
		}
	}
	o.Spec = s
	return o, nil
}

// Validate checks the export without contacting any cluster.
func (o *Options) Validate() error {
	if err := o.Write.Validate(); err != nil {
		return err
	}
	return o.Spec.Validate()
}

// Run checks everything against the clusters, then writes.
func (o *Options) Run(ctx context.Context) error {
	items, skipped, err := o.Spec.Plan(ctx)
	for _, s := range skipped {
		fmt.Fprintf(o.ErrOut, "Warning: %v\n", s)
	}
	if err != nil {
		return err
	}
	if err := apply.CheckOwnership(ctx, items); err != nil {
		return err
	}
	return o.Write.Apply(ctx, o.Out, items)
}
