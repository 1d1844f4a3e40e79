// Package synccmd implements `kubectl mcs sync`: the embedded KEP-1645 controller.
package synccmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/process"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/reconciler"
)

var (
	long = templates.LongDesc(`
		Act as the Multi-Cluster Services controller (KEP-1645) of a clusterset.

		For every ServiceExport in any member, sync writes in every member that has the namespace
		a ServiceImport, a derived Service "derived-NAME" and EndpointSlices copied from each
		exporting cluster, and sets the Valid, Ready and Conflict conditions on the exports.
		Conflicting exports are resolved in favour of the oldest, and listed in a table.

		A member that cannot be read (down, caches not synced yet, or not in --contexts) is never
		taken as "not exporting": what the clusterset recorded about it (ServiceImport
		status.clusters, slice source-cluster labels) stands until it is read again, or until
		--unreachable-timeout passes for a member read before. Members are retried with backoff and
		join when they come back; everything the readable members decide alone goes ahead.

		The clusterset is --contexts, else $KUBECTL_MCS_CONTEXTS, else the --context cluster alone;
		it is never guessed. With --print-manifests, --context names the host cluster.

		Without --watch it makes one pass and prints what it changed, one row per object (a
		service's EndpointSlices in one), and a summary line; with --watch it keeps the clusterset in
		sync until interrupted and prints each object it writes as it does (time, cluster, kind, the
		service, what became of it), and the conflicts when they change; -o json and -o name give
		the objects' names. It never changes an object it did not create.`)
	example = templates.Examples(`
		# One pass over a clusterset of three
		kubectl mcs sync --contexts=member1,member2,member3

		# What would change, as YAML
		kubectl mcs sync --contexts=member1,member2 --dry-run=client -o yaml

		# Keep syncing, one JSON line per write
		kubectl mcs sync --watch --contexts=member1,member2,member3 -o json

		# Act for member2 alone: read every member, write only in member2 (one such sync
		# in every member, each with its Lease in its own cluster)
		kubectl mcs sync --watch --contexts=member1,member2,member3 --local=member2 \
		    --leader-elect

		# Keep syncing, with metrics and leader election
		kubectl mcs sync --watch --contexts=member1,member2,member3 \
		    --metrics-bind-address=:8080 --health-probe-bind-address=:8081 --leader-elect

		# What kubectl mcs install runs in member1, as YAML (once installed: it reads the tokens)
		kubectl mcs sync --print-manifests --context=member1 \
		    --contexts=member1,member2,member3 \
		    --member-server=member2=https://10.0.0.2:6443,member3=https://10.0.0.3:6443`)
)

// Options holds sync's flags.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Clusterset  clusterset.Flags
	// Write is --dry-run, --field-manager and -o (the report as yaml or json, or the names of the objects written; default: tables).
	Write              apply.Flags
	Watch              bool
	UnreachableTimeout time.Duration
	SyncTimeout        time.Duration
	Workers            int
	MetricsAddr        string
	Profiling          bool
	KubeAPIQPS         float32
	KubeAPIBurst       int
	HealthAddr         string
	LeaderElect        bool
	LeaderContext      string
	LeaderNamespace    string
	AllNamespaces      bool
	Local              string
	PrintManifests     bool
	Install            install.Flags
	// Apply is the deprecated --print-manifests --apply: kubectl mcs install.
	Apply bool

	install   *install.Options
	namespace string
	members   []*clusterset.Connection
	genericiooptions.IOStreams
}

// outputFlags is sync's -o.
func outputFlags() printers.OutputFlags {
	return printers.OutputFlags{Formats: []string{"yaml", "json", "name"}, Usage: "Output format: yaml or json, the report of a pass (default: tables); name, one CLUSTER: RESOURCE/NAME line per object written (the conflicts as warnings on stderr); with --watch, json: one line per write and per change of the conflicts, name: one line per object written (default: one line per object written, with the time and the writes)"}
}

// NewCmdSync returns the sync command.
func NewCmdSync(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams}
	o.Write.Print = outputFlags()
	cmd := &cobra.Command{
		Use:     "sync --contexts=CTX[=ID],...",
		Short:   "Import exported services into every member cluster (once, or with --watch)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Complete(cmd))
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run(cmd.Context()))
		},
	}
	f := cmd.Flags()
	o.Clusterset.AddFlags(f)
	apply.AddFlags(cmd, &o.Write)
	f.BoolVarP(&o.Watch, "watch", "w", false, "Keep running and keep the clusterset in sync")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Sync every namespace (the default unless -n is given)")
	f.DurationVar(&o.UnreachableTimeout, "unreachable-timeout", 0, "Drop an unreachable member's endpoints from the other clusters after this long (0: keep them)")
	f.DurationVar(&o.SyncTimeout, "cache-sync-timeout", 30*time.Second, "How long to wait for every member's caches before deciding")
	f.IntVar(&o.Workers, "workers", 16, "Services synced in parallel with --watch (each mostly waits on its writes)")
	f.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "Serve Prometheus metrics here with --watch (e.g. :8080; 0 disables)")
	f.BoolVar(&o.Profiling, "profiling", false, "With --metrics-bind-address, also serve Go's pprof profiles there under /debug/pprof/")
	f.Float32Var(&o.KubeAPIQPS, "kube-api-qps", clusterset.DefaultQPS, "Requests per second to each member's API server (client-side limit)")
	f.IntVar(&o.KubeAPIBurst, "kube-api-burst", clusterset.DefaultBurst, "Requests each member's client may make in a burst above --kube-api-qps")
	f.StringVar(&o.HealthAddr, "health-probe-bind-address", "0", "Serve /healthz and /readyz here with --watch (0 disables)")
	f.StringVar(&o.Local, "local", "", "Act for this member (a context of --contexts) alone: read every member, write only in this one, its Lease there too. One such sync in every member keeps the clusterset as one sync of it all does")
	f.BoolVar(&o.LeaderElect, "leader-elect", false, "With --watch, run only while holding a Lease (several replicas, one active)")
	f.StringVar(&o.LeaderContext, "leader-elect-context", "", "Member context holding the Lease, one of --contexts (default: --local, else the first of --contexts). It is used whether or not it is reachable: while it is down nobody leads and the replicas keep retrying")
	f.StringVar(&o.LeaderNamespace, "leader-elect-namespace", "kube-system", "Namespace of the Lease")
	f.BoolVar(&o.PrintManifests, "print-manifests", false, "Print what runs sync --watch as a Deployment in the --context cluster (two replicas under leader election, a kubeconfig Secret with one kubeconfig per member); it writes nothing: kubectl mcs install creates what the member credentials need and applies it")
	o.Install.AddFlags(f, "With --print-manifests: ")
	f.BoolVar(&o.Apply, "apply", false, "With --print-manifests: apply the host's objects, after creating what the member credentials need")
	_ = f.MarkDeprecated("apply", "use kubectl mcs install, which takes the same flags")
	return cmd
}

// Complete resolves the clusterset and namespace.
func (o *Options) Complete(cmd *cobra.Command) error {
	if err := o.Write.Complete(cmd); err != nil {
		return err
	}
	if cmd.Flags().Changed("namespace") && !o.AllNamespaces {
		o.namespace = *o.ConfigFlags.Namespace
	}
	loader := &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset, QPS: o.KubeAPIQPS, Burst: o.KubeAPIBurst}
	refs, err := loader.Refs(true)
	if err != nil {
		return err
	}
	o.members = loader.Connect(cmd.Context(), refs)
	if o.PrintManifests {
		return o.completeInstall(cmd, loader)
	}
	return nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.install != nil {
		return nil // validated in completeInstall
	}
	if err := o.Write.Validate(); err != nil {
		return err
	}
	if o.Watch && o.Write.Print.Format == "yaml" {
		return errors.New("--watch prints one JSON line per write with -o json; -o yaml goes with a one-shot sync")
	}
	if err := o.validateLocal(); err != nil {
		return err
	}
	if o.LeaderElect && !o.Watch {
		return errors.New("--leader-elect goes with --watch")
	}
	if o.LeaderElect {
		if _, err := o.leaseMember(); err != nil {
			return err
		}
	}
	if o.Workers < 1 {
		return errors.New("--workers must be at least 1")
	}
	if err := clusterset.IDErrors(o.members); err != nil {
		return err
	}
	if err := validateRateLimit(o.KubeAPIQPS, o.KubeAPIBurst); err != nil {
		return err
	}
	if o.Profiling && (o.MetricsAddr == "" || o.MetricsAddr == "0") {
		return errors.New("--profiling serves on --metrics-bind-address: set it too")
	}
	reachable := 0
	for _, m := range o.members {
		if m.Err == nil {
			reachable++
		}
	}
	// --watch waits for members to come up; one pass with nothing to read has nothing to do.
	if reachable == 0 && !o.Watch {
		return clusterset.FirstError(o.members)
	}
	return nil
}

func (o *Options) reconcilerOptions(metrics *reconciler.Metrics) reconciler.Options {
	return reconciler.Options{
		Namespace: o.namespace, FieldManager: o.Write.FieldManager, DryRun: o.Write.DryRun != cmdutil.DryRunNone,
		UnreachableTimeout: o.UnreachableTimeout, Metrics: metrics, LoadSchemas: loadSchemas, Local: o.Local,
	}
}

// loadSchemas reads what a member's mcs-api CRDs declare, so that sync writes and compares only
// that (v0.1.0-era CRDs lack several ServiceImport fields). Without the right to read CRDs it
// writes every field and says so: a CRD that lacks one then refuses the write, by name.
func loadSchemas(ctx context.Context, m *clusterset.Connection, version string) (imp, exp engine.Pruner, err error) {
	s, err := mcsapi.LoadSchemas(ctx, m.Dynamic, version)
	if apierrors.IsForbidden(err) {
		klog.ErrorS(err, "cannot read the mcs-api CRDs; writing every field", "cluster", m.ID)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if s.Import != nil {
		imp = s.Import
	}
	if s.Export != nil {
		exp = s.Export
	}
	return imp, exp, nil
}

// Run syncs once, or keeps syncing with --watch.
func (o *Options) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.install != nil && o.Apply {
		return o.install.Install(ctx)
	}
	if o.install != nil {
		return o.install.Print(ctx)
	}
	if o.Watch {
		// One pass says this in its report; a watch has none.
		for _, m := range o.members {
			if m.Err != nil {
				fmt.Fprintf(o.ErrOut, "Warning: cluster %q (context %q): %v; what it exported stays imported until it can be read\n", m.ID, m.Context, m.Err)
			}
		}
		return o.watch(ctx)
	}
	quietInfo()
	r := reconciler.New(o.members, o.reconcilerOptions(nil))
	r.Start(ctx)
	r.WaitForSync(ctx, o.SyncTimeout)
	err := r.SyncAll(ctx)
	report := Report{Changes: toChanges(r.Changes()), Conflicts: r.Conflicts(), Unreachable: r.Unreachable(), Skipped: r.Skips()}
	report.Summary = summarize(report.Changes, len(report.Conflicts))
	switch o.Write.Print.Format {
	case "name":
		if perr := printNames(o.Out, report.Changes); perr != nil {
			return perr
		}
		warnConflicts(o.ErrOut, report.Conflicts)
		o.warn(report)
	case "":
		if perr := o.printReport(report, err != nil); perr != nil {
			return perr
		}
	default:
		if perr := printers.Data(o.Out, o.Write.Print.Format, report); perr != nil {
			return perr
		}
	}
	return err
}

func (o *Options) watch(ctx context.Context) error {
	limitHeap(os.Getenv)
	reg := prometheus.NewRegistry()
	metrics := reconciler.NewMetrics(reg)
	log := &changeLog{out: o.Out, errOut: o.ErrOut, format: o.Write.Print.Format, now: time.Now}
	opts := o.reconcilerOptions(metrics)
	opts.OnChanges = log.changes
	r := reconciler.New(o.members, opts)
	ready := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if o.Profiling {
		process.Pprof(mux)
	}
	if err := process.Serve(ctx, o.MetricsAddr, mux); err != nil {
		return err
	}
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	e, err := o.newElector()
	if err != nil {
		return err
	}
	if e != nil {
		e.SetView(r.View)
	}
	health.HandleFunc("/readyz", process.ReadyzHandler(e, ready))
	if err := process.Serve(ctx, o.HealthAddr, health); err != nil {
		return err
	}
	run := func(ctx context.Context) {
		r.Start(ctx)
		r.WaitForSync(ctx, o.SyncTimeout)
		close(ready)
		klog.V(2).InfoS("caches synced, syncing", "clusters", len(o.members), "namespace", o.namespace)
		go o.reportConflicts(ctx, r, log)
		go wait.UntilWithContext(ctx, func(context.Context) { log.flush() }, time.Second)
		r.Run(ctx, o.Workers)
	}
	if !o.LeaderElect {
		run(ctx)
		return nil
	}
	return e.Run(ctx, o.LeaderNamespace, run)
}

// reportConflicts prints the conflicts whenever the set of conflicts changes, and the members
// that turn unreachable or reachable again.
func (o *Options) reportConflicts(ctx context.Context, r *reconciler.Reconciler, log *changeLog) {
	last := "-"
	warned := map[string]bool{}
	wait.UntilWithContext(ctx, func(context.Context) {
		// Objects left alone (someone else's in our way, a source outside the clusterset): once
		// each, as the one-shot report does.
		now := map[string]bool{}
		for _, s := range r.Skips() {
			now[s] = true
			if !warned[s] {
				fmt.Fprintf(o.ErrOut, "Warning: %s\n", s)
			}
		}
		warned = now
		log.members(r.Unreachable())
		cs := r.Conflicts()
		var sig strings.Builder
		for _, c := range cs {
			fmt.Fprintf(&sig, "%s|%s|%s|%s|%v\n", c.Namespace, c.Service, c.Reason, c.Winner, c.Disagreeing)
		}
		if sig.String() == last {
			return
		}
		last = sig.String()
		log.conflicts(cs)
	}, 250*time.Millisecond)
}
