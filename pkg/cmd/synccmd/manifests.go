package synccmd

import (
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// completeInstall prepares --print-manifests (pkg/install): the host is the --context cluster,
// as every kubectl command's target is.
func (o *Options) completeInstall(cmd *cobra.Command, loader *clusterset.Loader) error {
	if o.Watch {
		return errors.New("--print-manifests prints what runs sync --watch; it does not go with --watch")
	}
	if cmd.Flags().Changed("namespace") {
		return errors.New("--print-manifests generates a sync of every namespace; -n does not go with it")
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err
	}
	host := raw.CurrentContext
	if c := o.ConfigFlags.Context; c != nil && *c != "" {
		host = *c
	}
	o.install = &install.Options{
		Flags: o.Install, Raw: raw, Host: host, Members: o.members, LeaseContext: o.LeaderContext,
		Write: o.Write,
		HostConfig: func() (dynamic.Interface, error) {
			cfg, err := loader.RESTConfig(host)
			if err != nil {
				return nil, err
			}
			return dynamic.NewForConfig(cfg)
		},
		Out: o.Out, ErrOut: o.ErrOut,
	}
	return o.install.Validate()
}
