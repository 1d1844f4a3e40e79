package install

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Print prints what runs sync (-o yaml, the default, or json) and writes nothing anywhere: the
// host's objects, or per member every member's, its identities and policy included. With
// ServiceAccount credentials it reads the token Secrets Install made, and fails naming the first
// member that has none before printing anything.
func (o *Options) Print(ctx context.Context) error {
	o.warn()
	cfgs := o.configs()
	kubeconfigs := make([]map[string][]byte, len(cfgs))
	for i, c := range cfgs {
		var err error
		if kubeconfigs[i], err = o.kubeconfigs(ctx, o.existingToken, c.Local); err != nil {
			return err
		}
	}
	mem, err := o.memory(ctx)
	if err != nil {
		return err
	}
	var written []printers.Written
	for i, c := range cfgs {
		c.Memory = mem
		var objs []runtime.Object
		if o.perMember() {
			if objs, err = o.memberObjects(cfgs, i); err != nil {
				return err
			}
		}
		us, err := Unstructured(append(objs, HostObjects(c, kubeconfigs[i])...))
		if err != nil {
			return err
		}
		for _, u := range us {
			written = append(written, printers.Written{Cluster: o.siteID(c), Resource: apply.ResourceName(resources[u.GetKind()]), Object: u})
		}
	}
	p := o.Write.Print
	if p.Format == "" {
		p.Format = "yaml"
	}
	return p.PrintObjects(o.Out, written)
}
