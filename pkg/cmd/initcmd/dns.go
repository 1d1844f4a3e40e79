package initcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/dns"
)

// corefileKey is where kubeadm, kops and the CoreDNS chart keep the Corefile.
const corefileKey = "Corefile"

var configMapResource = corev1.SchemeGroupVersion.WithResource("configmaps")

// DNSFlags are init's clusterset DNS flags.
type DNSFlags struct {
	Enable    bool
	Domain    string
	ConfigMap string

	set       bool // --dns was given: true adds our block, false removes it
	namespace string
	name      string
}

// AddFlags registers --dns, --dns-domain and --dns-configmap.
func (f *DNSFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.Enable, "dns", false, "Configure each member's CoreDNS to answer NAME.NS.svc.<dns-domain> from the derived Services (false: remove exactly that configuration).")
	cmd.Flags().StringVar(&f.Domain, "dns-domain", dns.DefaultDomain, "The clusterset DNS zone --dns serves.")
	cmd.Flags().StringVar(&f.ConfigMap, "dns-configmap", "kube-system/coredns", "NAMESPACE/NAME of the ConfigMap holding CoreDNS's Corefile.")
}

// Complete records whether --dns was given.
func (f *DNSFlags) Complete(cmd *cobra.Command) {
	f.set = cmd.Flags().Changed("dns")
}

// Validate checks the DNS flags.
func (f *DNSFlags) Validate(cmd *cobra.Command) error {
	if !f.set {
		for _, n := range []string{"dns-domain", "dns-configmap"} {
			if cmd.Flags().Changed(n) {
				return fmt.Errorf("--%s goes with --dns", n)
			}
		}
		return nil
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
	client  kubernetes.Interface
	cm      *corev1.ConfigMap
	changed bool
}

// planDNS reads every member's Corefile and computes the new one; nothing is written unless every
// member's can be edited.
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
		var next string
		if o.DNS.Enable {
			next, err = dns.Apply(cur, o.DNS.Domain)
		} else {
			next, err = dns.Remove(cur)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: refusing to edit the Corefile: %w", ref, err)
		}
		cm = cm.DeepCopy()
		cm.Data[corefileKey] = next
		edits = append(edits, dnsEdit{cm: cm, changed: next != cur, client: m.Client,
			item: apply.Item{Cluster: m.ID, Client: m.Dynamic, GVR: configMapResource}})
	}
	return edits, nil
}

// runDNS writes the planned Corefiles. The ConfigMap is not ours, so it is updated, not applied:
// only our marked block changes, and the write carries the resourceVersion read, so a concurrent
// edit fails it instead of being overwritten.
func (o *Options) runDNS(ctx context.Context) error {
	edits, err := o.planDNS(ctx)
	if err != nil {
		return err
	}
	var done, same []apply.Item
	for _, e := range edits {
		res := e.cm
		if e.changed && o.Write.DryRun != cmdutil.DryRunClient {
			opts := metav1.UpdateOptions{FieldManager: o.Write.FieldManager}
			if o.Write.DryRun == cmdutil.DryRunServer {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			res, err = e.client.CoreV1().ConfigMaps(e.cm.Namespace).Update(ctx, e.cm, opts)
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
		if e.changed {
			done = append(done, it)
		} else {
			same = append(same, it)
		}
	}
	op := "configured (clusterset DNS added)"
	if !o.DNS.Enable {
		op = "configured (clusterset DNS removed)"
	}
	if err := o.Write.Report(o.Out, done, op); err != nil {
		return err
	}
	return o.Write.Report(o.Out, same, "unchanged")
}
