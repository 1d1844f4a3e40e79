// Package status implements `kubectl mcs status`: the multi-cluster view of services, read from
// every member of the clusterset (or from a Karmada control plane with --karmada).
package statuscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

var (
	long = templates.LongDesc(`
		Show the multi-cluster services of the clusterset: one row per service exported or imported
		in any member, with its type, ports, the clusters that export and import it, the ready and
		total endpoints of each exporting cluster, its conflicts and its age.

		The STATUS column says which rows need attention (in colour on a terminal): Conflict when
		the exports disagree (the oldest export wins, exactly as kubectl mcs sync decides), Degraded
		when something is missing (an invalid export, a cluster without the import or without its
		namespace, no ready endpoints, an exporting cluster that cannot be read), Unknown when no
		cluster read exports it and its imports name sources outside --contexts. EXPORTED and
		IMPORTED count the clusters out of the clusterset; -o wide names them.

		With SERVICE, the service is described: its per-cluster breakdown, its conflicts and every
		ServiceExport's conditions. Clusters that cannot be read, or have no mcs-api CRDs, are
		shown as such and warned about; the rest is still shown.

		The clusterset is --contexts, else $KUBECTL_MCS_CONTEXTS, else the --context cluster alone,
		else every context of the kubeconfig.

		With --karmada, the --context cluster is a Karmada control plane: its MultiClusterServices
		(with their ServiceApplied and EndpointSliceDispatched conditions), ServiceExports and
		ServiceImports, and the PropagationPolicies that place them.

		-o json|yaml print a versioned document (apiVersion mcs.kubectl.io/v1alpha1, kind
		MultiClusterServiceStatusList or KarmadaServiceStatusList) described in docs/output.md.`)
	example = templates.Examples(`
		# Every multi-cluster service of every namespace
		kubectl mcs status -A --contexts=member1,member2,member3

		# One service, described cluster by cluster
		kubectl mcs status serve -n demo

		# With the clusters by name, cluster IPs, derived Services and the import state in each cluster
		kubectl mcs status -n demo -o wide

		# One line per multi-cluster service, for scripts
		kubectl mcs status -A -o name

		# Keep the table up to date
		kubectl mcs status -A --watch

		# For scripts: the conflicting services
		kubectl mcs status -A -o jsonpath='{.items[?(@.health=="Conflict")].name}'

		# A Karmada control plane
		kubectl mcs status -n demo --karmada-context=karmada-apiserver`)
)

// Options holds status's flags.
type Options struct {
	ConfigFlags   *genericclioptions.ConfigFlags
	Clusterset    clusterset.Flags
	PrintFlags    *printers.PrintFlags
	NoHeaders     bool
	NoColor       bool
	Watch         bool
	AllNamespaces bool
	Karmada       clusterset.KarmadaFlags
	ChunkSize     int64
	DNSDomain     string

	// Service is the optional SERVICE argument.
	Service   string
	namespace string
	members   []*clusterset.Connection
	printer   printers.ResourcePrinter // nil: table or describe
	color     bool
	terminal  bool
	now       func() time.Time
	genericiooptions.IOStreams
}

// NewCmdStatus returns the status command.
func NewCmdStatus(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams, PrintFlags: printers.NewPrintFlags(), now: time.Now}
	cmd := &cobra.Command{
		Use:     "status [SERVICE] [-n NAMESPACE | -A] [--contexts=CTX[=ID],...]",
		Short:   "Show the multi-cluster services of the clusterset (or of a Karmada control plane)",
		Long:    long,
		Example: example,
		Args:    cobra.MaximumNArgs(1),
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd, args))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	f := cmd.Flags()
	o.Clusterset.AddFlags(f)
	o.PrintFlags.AddFlags(cmd)
	f.BoolVar(&o.NoHeaders, "no-headers", false, "When using the default or wide output format, don't print headers.")
	f.BoolVar(&o.NoColor, "no-color", false, "Never colour the rows that need attention (default: colour on a terminal unless NO_COLOR is set).")
	f.BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch every member and redraw whenever anything changes.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Show the services of every namespace.")
	o.Karmada.AddFlags(f, "show its MultiClusterServices, ServiceExports and ServiceImports")
	f.Int64Var(&o.ChunkSize, "chunk-size", member.DefaultChunkSize, "List large numbers of objects in chunks of this size (0: in one request; 500 is kubectl's, for apiservers before 1.33 holding very large lists).")
	f.StringVar(&o.DNSDomain, "dns-domain", corefile.DefaultDomain, "The clusterset DNS zone the DNS names are shown in (as given to init --dns-domain).")
	return cmd
}

// Complete resolves the namespace, the printer and the clusterset.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.Service = args[0]
	}
	if err := o.Karmada.Complete(o.ConfigFlags); err != nil {
		return err
	}
	if !o.AllNamespaces {
		ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	var err error
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.terminal = printers.IsTerminal(o.Out)
	o.color = o.printer == nil && !o.NoColor && o.terminal && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	if o.Karmada.Enabled {
		return nil
	}
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset}
	refs, err := loader.Refs(false)
	if err != nil {
		return err
	}
	o.members = loader.Connect(cmd.Context(), refs)
	return nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.Service != "" {
		if o.AllNamespaces {
			return errors.New("a service cannot be shown by name across all namespaces: drop -A or the SERVICE")
		}
		if errs := validation.IsDNS1035Label(o.Service); len(errs) > 0 {
			return fmt.Errorf("service %q: not a valid Service name: %s", o.Service, errs[0])
		}
	}
	if o.ChunkSize < 0 {
		return errors.New("--chunk-size must not be negative")
	}
	if err := clusterset.IDErrors(o.members); err != nil {
		return err
	}
	if o.Karmada.Enabled && o.Clusterset.Contexts != "" {
		return errors.New("--contexts names a clusterset, --karmada a control plane (--context): give one of them")
	}
	return nil
}

// Run lists once, or keeps redrawing with --watch.
func (o *Options) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.Karmada.Enabled {
		if o.Watch {
			return o.watchKarmada(ctx)
		}
		return o.runKarmada(ctx)
	}
	if o.Watch {
		return o.watch(ctx)
	}
	start := time.Now()
	clusters := member.Read(ctx, o.members, o.namespace, o.Service, o.ChunkSize)
	read := time.Now()
	o.warn(clusters, nil)
	if err := nothingRead(clusters); err != nil {
		return err
	}
	l := status.Build(clusters)
	status.SetDNSNames(l, o.DNSDomain)
	if err := o.filter(l); err != nil {
		return err
	}
	if w := status.UnknownWarning(l); w != "" && o.Service == "" {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	l.Syncs = status.Syncs(clusters, time.Now())
	o.tellSyncs(l.Syncs)
	built := time.Now()
	err := o.print(o.Out, l)
	klog.V(4).InfoS("status", "clusters", len(clusters), "items", len(l.Items), "read", read.Sub(start), "join", built.Sub(read), "print", time.Since(built))
	return err
}

// tellSyncs writes, with a table, a line per sync running in the members and a warning for what
// it cannot do (-o json and yaml carry them as syncs).
func (o *Options) tellSyncs(syncs []status.SyncStatus) {
	if f := *o.PrintFlags.OutputFormat; f != "" && f != "wide" {
		return
	}
	lines, warnings := status.SyncLines(syncs, time.Now())
	for _, l := range lines {
		fmt.Fprintln(o.ErrOut, l)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
}

// unreadShown says what the output shows of a cluster that could not be read, as status.Build
// decides it: its last-known objects (a cache), else its exports as the other members' imports
// and copies tell them; their endpoints are marked (stale) either way.
func unreadShown(c snapshot.Cluster) string {
	if c.LastKnown {
		return "its last-known objects are shown, endpoints marked (stale)"
	}
	return "its exports are shown as the other members last copied them, endpoints marked (stale)"
}

// warn writes one stderr line per cluster that could not be read (or, with last, whose state
// changed since last).
func (o *Options) warn(clusters []snapshot.Cluster, last map[string]snapshot.State) {
	for _, c := range clusters {
		if last != nil {
			before, seen := last[c.ID]
			if before == c.State {
				continue
			}
			last[c.ID] = c.State
			if c.State == snapshot.Reachable {
				if !seen {
					continue
				}
				fmt.Fprintf(o.ErrOut, "Cluster %q (context %q) is reachable again\n", c.ID, c.Context)
				continue
			}
		}
		switch c.State {
		case snapshot.Unreachable:
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q (context %q) is unreachable: %s; %s\n", c.ID, c.Context, trimUnreachable(c.Message), unreadShown(c))
		case snapshot.NoCRDs:
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q (context %q) has no ServiceExport/ServiceImport CRDs: it exports and imports nothing; to install them:%s\n",
				c.ID, c.Context, shell.Block(shell.MCS("init", "--contexts="+c.Context)))
		case snapshot.Error:
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q (context %q): %s; %s\n", c.ID, c.Context, c.Message, unreadShown(c))
		}
	}
}

func trimUnreachable(msg string) string { return strings.TrimPrefix(msg, "unreachable: ") }

// nothingRead is the error when not a single member could be read.
func nothingRead(clusters []snapshot.Cluster) error {
	var why []string
	for _, c := range clusters {
		if c.State == snapshot.Reachable || c.LastKnown {
			return nil
		}
		why = append(why, fmt.Sprintf("cluster %q: %s", c.ID, c.Message))
	}
	return fmt.Errorf("no cluster of the clusterset could be read (%s)", strings.Join(why, "; "))
}

// filter keeps the one service asked for, or fails like kubectl get does when it is not found.
func (o *Options) filter(l *status.MultiClusterServiceStatusList) error {
	if o.Service == "" {
		return nil
	}
	for _, it := range l.Items {
		if it.Name == o.Service && it.Namespace == o.namespace {
			l.Items = []status.MultiClusterServiceStatus{it}
			return nil
		}
	}
	if o.Watch {
		l.Items = l.Items[:0]
		return nil
	}
	return status.NotFound(o.namespace, o.Service, l.Clusters)
}

// print writes the list as a table, a description (one SERVICE) or through -o's printer.
func (o *Options) print(w io.Writer, l *status.MultiClusterServiceStatusList) error {
	if o.printer != nil {
		return o.printer.PrintObj(l, w)
	}
	if o.PrintFlags.Name() && (len(l.Items) > 0 || o.Service != "") {
		return printNames(w, status.Names(l))
	}
	po := o.printOptions()
	if o.Service != "" {
		if len(l.Items) == 0 {
			_, err := fmt.Fprintf(o.ErrOut, "Service %s/%s is neither exported nor imported in any cluster.\n", o.namespace, o.Service)
			return err
		}
		return status.Describe(w, l, l.Items[0], po)
	}
	if len(l.Items) == 0 {
		_, err := fmt.Fprintln(o.ErrOut, o.noneFound("multi-cluster services")) // like kubectl get: stdout stays empty
		return err
	}
	return status.PrintTable(w, l, po)
}

// printNames writes -o name's lines; none is no line, as kubectl get -o name.
func printNames(w io.Writer, names []string) error {
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

func (o *Options) printOptions() status.PrintOptions {
	return status.PrintOptions{Wide: o.PrintFlags.Wide(), NoHeaders: o.NoHeaders, Color: o.color, Now: o.now()}
}

func (o *Options) noneFound(what string) string {
	if o.namespace == "" {
		return "No " + what + " found."
	}
	return fmt.Sprintf("No %s found in %s namespace.", what, o.namespace)
}

var _ runtime.Object = &status.MultiClusterServiceStatusList{}
