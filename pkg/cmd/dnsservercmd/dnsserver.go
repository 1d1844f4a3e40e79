// Package dnsservercmd implements `kubectl mcs dns-server`: the clusterset DNS server of one
// member, which stock CoreDNS forwards the clusterset zone to (`init --dns`).
package dnsservercmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dnsserver"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dnszone"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

var (
	long = templates.LongDesc(`
		Answer the clusterset DNS zone of KEP-1645 (clusterset.local) for one member cluster: the
		current context, or --context.

		It reads only that member, through informers: its ServiceImports (in the mcs-api version
		it serves) and the EndpointSlices that sync wrote there (labelled
		endpointslice.kubernetes.io/managed-by=kubectl-mcs), and answers, over UDP and TCP, these
		names of the zone (ZONE: clusterset.local, or --dns-domain):

			NAME.NS.svc.ZONE                      A/AAAA of the service
			_PORT._PROTO.NAME.NS.svc.ZONE         SRV of a named port
			HOSTNAME.CLUSTERID.NAME.NS.svc.ZONE   A/AAAA of one endpoint (Headless)

		A ClusterSetIP service's name answers the import's IPs, a Headless service's the ready
		endpoints of every cluster; SRV of NAME.NS.svc.ZONE lists every port. Headless SRV records
		point at the per-endpoint names (the dashed IP, 10-1-2-3, when an endpoint has no
		hostname), which resolve too. Other names in the zone are NXDOMAIN, names outside it
		REFUSED. It answers SERVFAIL until its caches have synced, and keeps answering from them
		while the apiserver is away.

		Stock CoreDNS forwards the zone to it: kubectl mcs init --dns. --print-manifests prints
		what runs it in a member: a Deployment of two replicas with a read-only ServiceAccount,
		and the Service kubectl-mcs-system/kubectl-mcs-dns whose ClusterIP init --dns forwards to.

		Each query is logged at -v=2.`)
	example = templates.Examples(`
		# Run it in every member, then make CoreDNS forward clusterset.local to it
		kubectl mcs dns-server --print-manifests |
		    kubectl --context member1 apply -f -
		kubectl mcs init --contexts=member1,member2 --dns

		# Run it on this machine for member2, and ask it
		kubectl mcs dns-server --context member2 --listen 127.0.0.1:5353
		dig @127.0.0.1 -p 5353 serve.demo.svc.clusterset.local`)
)

// Options holds dns-server's flags.
type Options struct {
	ConfigFlags    *genericclioptions.ConfigFlags
	Listen         string
	HealthAddr     string
	ShutdownDelay  time.Duration
	Domain         string
	TTL            uint32
	PrintManifests bool
	Image          string
	Print          printers.OutputFlags

	cluster string // how errors and logs name the member
	member  *clusterset.Connection
	genericiooptions.IOStreams
}

// NewCmdDNSServer returns the dns-server command.
func NewCmdDNSServer(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newCmd(flags, streams)
	return cmd
}

func newCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) (*cobra.Command, *Options) {
	o := &Options{ConfigFlags: flags, IOStreams: streams,
		Print: printers.OutputFlags{Format: "yaml", Formats: []string{"yaml", "json"}, Usage: "With --print-manifests: yaml or json"}}
	cmd := &cobra.Command{
		Use:     "dns-server",
		Short:   "Answer the clusterset DNS zone (clusterset.local) for one member cluster",
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
	f.StringVar(&o.Listen, "listen", fmt.Sprintf(":%d", install.DNSServerPort), "HOST:PORT to answer on, UDP and TCP")
	f.StringVar(&o.HealthAddr, "health-probe-bind-address", "0", "Serve /healthz and /readyz (ready: caches synced) here (0 disables)")
	f.DurationVar(&o.ShutdownDelay, "shutdown-delay", 15*time.Second, "On SIGTERM, go on answering this long with /readyz failing, so that kube-proxy moves the Service's queries, pooled UDP flows included, to the other replicas before this one stops")
	f.StringVar(&o.Domain, "dns-domain", corefile.DefaultDomain, "The clusterset DNS zone (as given to init --dns-domain)")
	f.Uint32Var(&o.TTL, "ttl", dnszone.DefaultTTL, "TTL in seconds of every answer, negative ones included")
	f.BoolVar(&o.PrintManifests, "print-manifests", false, "Print what runs the DNS server in a member (Namespace, ServiceAccount, ClusterRole and binding, Deployment, Service "+names.SystemNamespace+"/"+names.DNSServerName+") instead of running it")
	f.StringVar(&o.Image, "image", install.DefaultImage(), "With --print-manifests: the container image of the Deployment")
	o.Print.AddFlags(cmd)
	return cmd, o
}

// Complete names the member and, unless printing, builds its clients: from the kubeconfig's
// current context or --context, or in a pod from its ServiceAccount.
func (o *Options) Complete(cmd *cobra.Command) error {
	o.Domain = strings.ToLower(strings.TrimSuffix(o.Domain, "."))
	o.cluster = "in-cluster"
	if raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig(); err == nil && raw.CurrentContext != "" {
		o.cluster = raw.CurrentContext
	}
	if c := o.ConfigFlags.Context; c != nil && *c != "" {
		o.cluster = *c
	}
	for _, n := range []string{"image", "output"} {
		if cmd.Flags().Changed(n) && !o.PrintManifests {
			return fmt.Errorf("--%s goes with --print-manifests", n)
		}
	}
	if o.PrintManifests {
		return nil
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("cluster %q: %w", o.cluster, err)
	}
	cfg.UserAgent = "kubectl-mcs-dns"
	m := &clusterset.Connection{Ref: clusterset.Ref{Context: o.cluster, ID: o.cluster}, Config: cfg}
	if m.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("cluster %q: %w", o.cluster, err)
	}
	if m.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("cluster %q: %w", o.cluster, err)
	}
	m.Discovery = m.Client.Discovery()
	o.member = m
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := o.Print.Validate(); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Subdomain(o.Domain); len(errs) > 0 {
		return fmt.Errorf("--dns-domain %q: %s", o.Domain, errs[0])
	}
	if o.TTL < 1 || o.TTL > 3600 {
		return fmt.Errorf("--ttl %d: must be 1 to 3600 seconds", o.TTL)
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return fmt.Errorf("--listen %q: want HOST:PORT (:5353 for every address): %w", o.Listen, err)
	}
	if o.PrintManifests {
		return install.CheckImage(o.Image)
	}
	return nil
}

// Run prints the manifests, or answers until interrupted.
func (o *Options) Run(ctx context.Context) error {
	if o.PrintManifests {
		return o.printManifests()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := dnsserver.New(o.member, dnsserver.Config{Listen: o.Listen, HealthAddr: o.HealthAddr,
		Zone: dnszone.Config{Domain: o.Domain, TTL: o.TTL}, Drain: o.ShutdownDelay})
	if err := s.Listen(); err != nil {
		return err
	}
	klog.InfoS("listening", "cluster", o.cluster, "zone", o.Domain, "addr", s.Addr(), "health", s.HealthAddr())
	return s.Run(ctx)
}

func (o *Options) printManifests() error {
	c := install.DNSServerConfig{Image: o.Image}
	if o.Domain != corefile.DefaultDomain {
		c.Domain = o.Domain
	}
	if o.TTL != dnszone.DefaultTTL {
		c.TTL = o.TTL
	}
	us, err := install.Unstructured(install.DNSServerObjects(c))
	if err != nil {
		return err
	}
	// The objects are the same for every member, whatever the current context: no document
	// names a cluster.
	ws := make([]printers.Written, len(us))
	for i, u := range us {
		ws[i] = printers.Written{Object: u}
	}
	if o.Print.Format == "yaml" {
		fmt.Fprintln(o.Out, "# The DNS server of a member: the same objects for every member; apply them in each.")
	}
	return o.Print.PrintObjects(o.Out, ws)
}
