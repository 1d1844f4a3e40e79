package clusterset

import (
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// KarmadaFlags say whether the --context cluster is a Karmada control plane rather than a
// clusterset: --karmada, or karmadactl's own --karmada-context=CTX, which means --karmada
// --context=CTX.
type KarmadaFlags struct {
	Enabled bool
	Context string
}

// AddFlags registers --karmada (what it does with the control plane is the command's own words)
// and --karmada-context.
func (f *KarmadaFlags) AddFlags(fs *pflag.FlagSet, usage string) {
	fs.BoolVar(&f.Enabled, "karmada", false, "The --context cluster is a Karmada control plane: "+usage)
	fs.StringVar(&f.Context, "karmada-context", "", "Same as --karmada --context=CTX (karmadactl's flag)")
}

// Complete turns --karmada-context=CTX into --karmada --context=CTX, and reads the kubeconfig as
// the clusterset commands do (RawConfig), so that a control plane missing from it is said so.
func (f *KarmadaFlags) Complete(cf *genericclioptions.ConfigFlags) error {
	if f.Context != "" {
		f.Enabled = true
		cf.Context = &f.Context
	}
	if !f.Enabled {
		return nil
	}
	_, err := RawConfig(cf)
	return err
}

// ControlPlaneName is how output and errors name the control plane: its context (the current
// one when --context is not given), or "karmada" when the kubeconfig names none.
func ControlPlaneName(cf *genericclioptions.ConfigFlags) string {
	if cf.Context != nil && *cf.Context != "" {
		return *cf.Context
	}
	if raw, err := cf.ToRawKubeConfigLoader().RawConfig(); err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	return "karmada"
}
