package install

import (
	"context"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/apply"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// Print prints the host's objects (-o yaml, the default, or json) and writes nothing anywhere:
// with ServiceAccount credentials it reads each member's token Secret, which Install made, and
// fails naming the first member that has none before printing anything.
func (o *Options) Print(ctx context.Context) error {
	o.warn()
	cfg := o.Config()
	kubeconfigs, err := o.kubeconfigs(ctx, o.existingToken)
	if err != nil {
		return err
	}
	if cfg.Memory, err = o.memory(ctx); err != nil {
		return err
	}
	us, err := Unstructured(HostObjects(cfg, kubeconfigs))
	if err != nil {
		return err
	}
	written := make([]printers.Written, len(us))
	for i, u := range us {
		written[i] = printers.Written{Cluster: o.hostID(), Resource: apply.ResourceName(resources[u.GetKind()]), Object: u}
	}
	p := o.Write.Print
	if p.Format == "" {
		p.Format = "yaml"
	}
	return p.PrintObjects(o.Out, written)
}
