package initcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// corefileKey is where kubeadm, kops and the CoreDNS chart keep the Corefile.
const corefileKey = "Corefile"

var configMapResource = corev1.SchemeGroupVersion.WithResource("configmaps")

// DNSFlags are init's clusterset DNS flags.
type DNSFlags struct {
	Enable    bool
	Domain    string
	ConfigMap string
	// Server is --dns-server: the one DNS server address every member's CoreDNS forwards to;
	// empty: each member's kubectl-mcs-dns Service.
	Server string
	// Wait is --dns-wait: how long to wait for that Service to have a ready endpoint.
	Wait time.Duration

	set       bool // --dns was given: true adds our block, false removes it
	namespace string
	name      string
}

// AddFlags registers --dns, --dns-domain, --dns-configmap, --dns-server and --dns-wait.
func (f *DNSFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.Enable, "dns", false, "Configure each member's CoreDNS to forward the clusterset zone (<dns-domain>) to the member's DNS server, kubectl mcs dns-server (false: remove exactly that configuration).")
	cmd.Flags().StringVar(&f.Domain, "dns-domain", corefile.DefaultDomain, "The clusterset DNS zone --dns serves.")
	cmd.Flags().StringVar(&f.ConfigMap, "dns-configmap", "kube-system/coredns", "NAMESPACE/NAME of the ConfigMap holding CoreDNS's Corefile.")
	cmd.Flags().StringVar(&f.Server, "dns-server", "", "IP[:PORT] (default port 53) of the DNS server every member's CoreDNS forwards the zone to, e.g. 127.0.0.1:5353 where it runs beside CoreDNS (default: in each member, the ClusterIP of service "+names.SystemNamespace+"/"+names.DNSServerName+").")
	cmd.Flags().DurationVar(&f.Wait, "dns-wait", 0, "How long to wait for service "+names.SystemNamespace+"/"+names.DNSServerName+" to have a ready endpoint in every member (0: refuse at once while one has none).")
}

// Complete records whether --dns was given.
func (f *DNSFlags) Complete(cmd *cobra.Command) {
	f.set = cmd.Flags().Changed("dns")
}

// Validate checks the DNS flags.
func (f *DNSFlags) Validate(cmd *cobra.Command) error {
	if !f.set {
		for _, n := range []string{"dns-domain", "dns-configmap", "dns-server", "dns-wait"} {
			if cmd.Flags().Changed(n) {
				return fmt.Errorf("--%s goes with --dns", n)
			}
		}
		return nil
	}
	switch {
	case f.Wait < 0:
		return fmt.Errorf("--dns-wait %s: want a duration of 0 or more", f.Wait)
	case f.Wait > 0 && (!f.Enable || f.Server != ""):
		return fmt.Errorf("--dns-wait waits for service %s/%s: it goes with --dns, without --dns-server", names.SystemNamespace, names.DNSServerName)
	}
	if f.Server != "" {
		if !f.Enable {
			return fmt.Errorf("--dns-server goes with --dns, not --dns=false")
		}
		addr, err := corefile.ParseUpstream(f.Server)
		if err != nil {
			return fmt.Errorf("--dns-server: %w", err)
		}
		f.Server = addr
	}
	f.Domain = strings.ToLower(strings.TrimSuffix(f.Domain, "."))
	if errs := validation.IsDNS1123Subdomain(f.Domain); len(errs) > 0 {
		return fmt.Errorf("--dns-domain %q: %s", f.Domain, errs[0])
	}
	ns, name, ok := strings.Cut(f.ConfigMap, "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("--dns-configmap %q: want NAMESPACE/NAME", f.ConfigMap)
	}
	f.namespace, f.name = ns, name
	return nil
}

// dnsEdit is the new Corefile of one member.
type dnsEdit struct {
	item    apply.Item
	cm      *corev1.ConfigMap
	changed bool
	had     bool // the Corefile held our block already: an edit replaces it
	member  *clusterset.Connection
}

// planDNS reads every member's Corefile and computes the new one; nothing is written unless every
// member's can be edited. Every Corefile is checked before the DNS server Services, so that a
// refused --dns-domain is said at once, not after --dns-wait.
func (o *Options) planDNS(ctx context.Context) ([]dnsEdit, error) {
	var edits []dnsEdit
	for _, m := range o.members {
		ref := fmt.Sprintf("cluster %q: configmap %s/%s", m.ID, o.DNS.namespace, o.DNS.name)
		cm, err := m.Client.CoreV1().ConfigMaps(o.DNS.namespace).Get(ctx, o.DNS.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s not found: --dns edits CoreDNS's Corefile (name another ConfigMap with --dns-configmap)", ref)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		cur, ok := cm.Data[corefileKey]
		if !ok {
			return nil, fmt.Errorf("%s has no %s key", ref, corefileKey)
		}
		next := cur
		if o.DNS.Enable {
			err = corefile.Check(cur, o.DNS.Domain)
		} else {
			next, err = corefile.Remove(cur)
		}
		if se := (*corefile.ServedError)(nil); errors.As(err, &se) {
			return nil, fmt.Errorf("cluster %q: %s/%s %w: pick another --dns-domain", m.ID, o.DNS.namespace, o.DNS.name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: refusing to edit the Corefile: %w", ref, err)
		}
		cm = cm.DeepCopy()
		cm.Data[corefileKey] = next
		edits = append(edits, dnsEdit{cm: cm, changed: next != cur, had: corefile.Has(cur), member: m,
			item: apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: configMapResource}})
	}
	if !o.DNS.Enable {
		return edits, nil
	}
	deadline := time.Now().Add(o.DNS.Wait)
	for i, e := range edits {
		up := corefile.Upstream{Addr: o.DNS.Server}
		if up.Addr == "" {
			var err error
			if up, err = o.DNS.dnsService(ctx, e.member, deadline); err != nil {
				return nil, err
			}
		}
		cur := e.cm.Data[corefileKey]
		next, err := corefile.Apply(cur, o.DNS.Domain, up)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: configmap %s/%s: refusing to edit the Corefile: %w", e.item.Cluster, o.DNS.namespace, o.DNS.name, err)
		}
		edits[i].cm.Data[corefileKey], edits[i].changed = next, next != cur
	}
	return edits, nil
}

// runDNS writes the Corefiles planDNS computed. The ConfigMap is not ours, so it is updated, not
// applied: only our marked block changes, and the write carries the resourceVersion read, so a
// concurrent edit fails it instead of being overwritten.
func (o *Options) runDNS(ctx context.Context, edits []dnsEdit) error {
	var err error
	var added, replaced, same []apply.Item
	for _, e := range edits {
		res := e.cm
		if e.changed && o.Write.DryRun != cmdutil.DryRunClient {
			opts := metav1.UpdateOptions{FieldManager: o.Write.FieldManager}
			if o.Write.DryRun == cmdutil.DryRunServer {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			res, err = e.member.Client.CoreV1().ConfigMaps(e.cm.Namespace).Update(ctx, e.cm, opts)
			if apierrors.IsConflict(err) {
				return fmt.Errorf("cluster %q: configmap %s/%s changed while init ran; run it again", e.item.Cluster, e.cm.Namespace, e.cm.Name)
			}
			if err != nil {
				return fmt.Errorf("cluster %q: configmap %s/%s: %w", e.item.Cluster, e.cm.Namespace, e.cm.Name, err)
			}
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(res)
		if err != nil {
			return err
		}
		it := e.item
		it.Object = &unstructured.Unstructured{Object: obj}
		it.Object.SetAPIVersion("v1")
		it.Object.SetKind("ConfigMap")
		switch {
		case !e.changed:
			same = append(same, it)
		case e.had && o.DNS.Enable:
			replaced = append(replaced, it)
		default:
			added = append(added, it)
		}
	}
	op := "configured (clusterset DNS added)"
	if !o.DNS.Enable {
		op = "configured (clusterset DNS removed)"
	}
	for _, r := range []struct {
		items []apply.Item
		op    string
	}{{added, op}, {replaced, "configured (clusterset DNS replaced)"}, {same, "unchanged"}} {
		if err := o.Write.Report(o.Out, r.items, r.op); err != nil {
			return err
		}
	}
	return nil
}
