// Package diagnose implements `kubectl mcs diagnose`: every link of the multi-cluster service
// chain checked, in every member, with the fix for each broken one. It only reads.
package diagnosecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/diagnose"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

var (
	long = templates.LongDesc(`
		Check every link of the multi-cluster service chain, in every member, and say which one is
		broken and what to do about it. Nothing is written.

		The clusterset: every context reachable, the mcs-api CRDs installed (v1alpha1-only members
		flagged), cluster IDs valid, unique and consistent with their ClusterProperty, the
		permissions kubectl mcs sync needs (SelfSubjectAccessReview), clock skew, and the CoreDNS
		block of init --dns. Every export: its Service, its Valid/Ready/Conflict conditions and
		their age (conditions older than the last change mean no controller is running), its
		conflicts, its ready endpoints. Every import, in every member: the ServiceImport and its
		source clusters, its IP against the derived Service, the derived Service, one slice copy per
		source cluster holding only endpoints the source still has, no copy from outside the
		clusterset. With --karmada-context: the control plane's MultiClusterServices,
		ServiceExports and ServiceImports, and what Karmada placed in the members.

		The clusterset is --contexts, else $KUBECTL_MCS_CONTEXTS, else the --context cluster alone,
		else every context of the kubeconfig. A SERVICE that no member exports or imports is an
		error, as in kubectl mcs status SERVICE.

		One section per check; on a terminal each line is marked ✔ (ok), ✖ (failed) or !
		(warning). Exit status 1 when a check failed; warnings do not fail. -o json|yaml print a
		versioned document (apiVersion mcs.kubectl.io/v1alpha1, kind DiagnoseReport) described in
		docs/output.md; --junit writes JUnit XML, one testcase per check per object.`)
	example = templates.Examples(`
		# Everything, in every namespace
		kubectl mcs diagnose -A --contexts=member1,member2,member3

		# One service
		kubectl mcs diagnose serve -n demo

		# In CI: wait until the change has propagated, keep a JUnit report
		kubectl mcs diagnose -n demo --wait=2m --junit=diagnose.xml

		# With a Karmada control plane
		kubectl mcs diagnose -n demo --karmada-context=karmada-apiserver \
		    --contexts=member1,member2`)
)

// retryEvery is the pause between runs with --wait.
const retryEvery = 2 * time.Second

// Options holds diagnose's flags.
type Options struct {
	ConfigFlags    *genericclioptions.ConfigFlags
	Clusterset     clusterset.Flags
	Output         printers.OutputFlags
	JUnit          string
	Wait           time.Duration
	NoColor        bool
	AllNamespaces  bool
	KarmadaContext string
	ChunkSize      int64

	// Service is the optional SERVICE argument.
	Service   string
	namespace string
	loader    *clusterset.Loader
	refs      []clusterset.Ref
	text      diagnose.TextOptions
	genericiooptions.IOStreams
}

// NewCmdDiagnose returns the diagnose command.
func NewCmdDiagnose(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: flags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "diagnose [SERVICE] [-n NAMESPACE | -A] [--contexts=CTX[=ID],...]",
		Short:   "Check every link of the multi-cluster service chain and say how to fix what is broken",
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
	o.Output = printers.OutputFlags{Formats: []string{"json", "yaml"}, Usage: "Output format. One of: (json, yaml). Default: one section per check."}
	o.Output.AddFlags(cmd)
	f.StringVar(&o.JUnit, "junit", "", "Also write the results to this file as JUnit XML (one testcase per check per object).")
	f.DurationVar(&o.Wait, "wait", 0, "Run the checks again every 2s until none fails or this much time has passed (0: once).")
	f.BoolVar(&o.NoColor, "no-color", false, "Plain ok/FAIL/warn marks, no symbols or colour (default on a terminal: ✔ ✖ ! in colour unless NO_COLOR is set).")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Check the services of every namespace.")
	f.StringVar(&o.KarmadaContext, "karmada-context", "", "Also check this Karmada control plane: its MultiClusterServices, ServiceExports, ServiceImports and what it placed in the members")
	f.Int64Var(&o.ChunkSize, "chunk-size", member.DefaultChunkSize, "List large numbers of objects in chunks of this size (0: in one request; 500 is kubectl's, for apiservers before 1.33 holding very large lists).")
	return cmd
}

// Complete resolves the namespace, the output and the clusterset.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.Service = args[0]
	}
	var err error
	if o.namespace, err = clusterset.Namespace(o.ConfigFlags, o.AllNamespaces); err != nil {
		return err
	}
	if err := o.Output.Validate(); err != nil {
		return err
	}
	terminal := printers.IsTerminal(o.Out)
	o.text.Symbols = terminal && !o.NoColor
	o.text.Color = o.text.Symbols && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	o.text.Width = printers.TerminalWidth(o.Out) // 0 off a terminal: diagnose.DefaultWidth
	o.loader = &clusterset.Loader{ConfigFlags: o.ConfigFlags, Flags: &o.Clusterset, KeepIDs: true}
	refs, err := o.loader.Refs(false)
	if err != nil {
		return err
	}
	if o.KarmadaContext != "" {
		if err := clusterset.HasContext(o.ConfigFlags, o.KarmadaContext); err != nil {
			return err
		}
		// The control plane is checked as such, not as a member.
		kept := refs[:0]
		for _, r := range refs {
			if r.Context != o.KarmadaContext {
				kept = append(kept, r)
			}
		}
		refs = kept
	}
	o.refs = refs
	return nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := clusterset.ValidateService(o.Service, o.AllNamespaces, "diagnosed"); err != nil {
		return err
	}
	if o.Wait < 0 {
		return errors.New("--wait must not be negative")
	}
	if o.ChunkSize < 0 {
		return errors.New("--chunk-size must not be negative")
	}
	if len(o.refs) == 0 {
		return errors.New("no member to diagnose: pass --contexts=CTX1,CTX2")
	}
	return nil
}

// Run reads and checks, again every 2s with --wait until nothing fails, then prints.
func (o *Options) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	deadline := time.Now().Add(o.Wait)
	var rep *diagnose.Report
	for {
		rep = o.once(ctx)
		left := time.Until(deadline)
		if (rep.Summary.Failed == 0 && !rep.Missing) || left <= 0 || ctx.Err() != nil {
			break
		}
		fmt.Fprintf(o.ErrOut, "%s; checking again (--wait: %s left)\n", o.failing(rep), left.Round(time.Second))
		select {
		case <-ctx.Done():
		case <-time.After(min(retryEvery, left)):
		}
	}
	return o.finish(rep)
}

// finish prints the report and says how the run ended. A SERVICE that no member holds fails as
// status SERVICE does, in one line naming it; the report is printed too only when a check failed
// (an unreachable member may be why).
func (o *Options) finish(rep *diagnose.Report) error {
	if rep.Missing && rep.Summary.Failed == 0 {
		return status.NotFound(o.namespace, o.Service, rep.Clusters)
	}
	if err := o.print(rep); err != nil {
		return err
	}
	if rep.Missing {
		return status.NotFound(o.namespace, o.Service, rep.Clusters)
	}
	if rep.Summary.Failed > 0 {
		return fmt.Errorf("%d of %d checks failed", rep.Summary.Failed, len(rep.Results))
	}
	return nil
}

// failing says, with --wait, why the run goes on.
func (o *Options) failing(rep *diagnose.Report) string {
	if rep.Summary.Failed == 0 {
		return fmt.Sprintf("service %s/%s not found", o.namespace, o.Service)
	}
	return fmt.Sprintf("%d check(s) failing (%s)", rep.Summary.Failed, firstFailures(rep, 3))
}

// once connects (members that were down may be back), reads and checks.
func (o *Options) once(ctx context.Context) *diagnose.Report {
	members := o.loader.Connect(ctx, o.refs)
	s := &diagnose.Snapshot{Now: time.Now(), Namespace: o.namespace, Service: o.Service}
	s.Clusters = diagnose.Read(ctx, members, o.namespace, o.Service, o.ChunkSize)
	if o.KarmadaContext != "" {
		s.Karmada = o.readKarmada(ctx)
	}
	return diagnose.Run(s)
}

// readKarmada reads the --karmada-context control plane.
func (o *Options) readKarmada(ctx context.Context) *diagnose.Karmada {
	cfg, err := o.loader.RESTConfig(o.KarmadaContext)
	if err != nil {
		return &diagnose.Karmada{Context: o.KarmadaContext, Err: err.Error()}
	}
	return diagnose.ReadKarmada(ctx, o.KarmadaContext, cfg, o.namespace, o.ChunkSize)
}

func (o *Options) print(rep *diagnose.Report) error {
	if o.JUnit != "" {
		f, err := os.Create(o.JUnit)
		if err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
		err = diagnose.WriteJUnit(f, rep)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--junit %s: %w", o.JUnit, err)
		}
	}
	if o.Output.Documents() {
		return printers.Data(o.Out, o.Output.Format, rep)
	}
	return diagnose.PrintText(o.Out, rep, o.text)
}

func firstFailures(rep *diagnose.Report, n int) string {
	var out []string
	for _, r := range rep.Results {
		if r.Severity == diagnose.Fail && len(out) < n {
			out = append(out, strings.TrimSpace(r.Check+" "+r.Cluster+" "+r.Object))
		}
	}
	return strings.Join(out, "; ")
}
