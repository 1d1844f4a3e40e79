package statuscmd

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/member"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// connectKarmada connects to the --context cluster.
func (o *Options) connectKarmada() (*member.ControlPlane, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	return member.ConnectControlPlane(clusterset.ControlPlaneName(o.ConfigFlags), cfg, err)
}

func (o *Options) runKarmada(ctx context.Context) error {
	cp, err := o.connectKarmada()
	if err != nil {
		return err
	}
	in, err := cp.Read(ctx, o.namespace, o.ChunkSize)
	if err != nil {
		return err
	}
	l := status.BuildKarmada(in)
	if err := o.filterKarmada(l); err != nil {
		return err
	}
	return o.printKarmada(o.Out, l)
}

// filterKarmada keeps the objects of the one service asked for.
func (o *Options) filterKarmada(l *status.KarmadaServiceStatusList) error {
	if o.Service == "" {
		return nil
	}
	keep := func(ns, name string) bool { return ns == o.namespace && name == o.Service }
	var mcs []status.KarmadaMCSStatus
	for _, m := range l.MultiClusterServices {
		if keep(m.Namespace, m.Name) {
			mcs = append(mcs, m)
		}
	}
	filter := func(in []status.KarmadaObjectStatus) []status.KarmadaObjectStatus {
		out := []status.KarmadaObjectStatus{}
		for _, s := range in {
			if keep(s.Namespace, s.Name) {
				out = append(out, s)
			}
		}
		return out
	}
	l.MultiClusterServices = append([]status.KarmadaMCSStatus{}, mcs...)
	l.ServiceExports, l.ServiceImports = filter(l.ServiceExports), filter(l.ServiceImports)
	rbs := []status.KarmadaBindingStatus{}
	for _, b := range l.ResourceBindings {
		if keep(b.Namespace, b.Service) {
			rbs = append(rbs, b)
		}
	}
	l.ResourceBindings = rbs
	if !o.Watch && len(l.MultiClusterServices)+len(l.ServiceExports)+len(l.ServiceImports) == 0 {
		return fmt.Errorf("cluster %q: no MultiClusterService, ServiceExport or ServiceImport %s/%s on the Karmada control plane", l.ControlPlane, o.namespace, o.Service)
	}
	return nil
}

func (o *Options) printKarmada(w io.Writer, l *status.KarmadaServiceStatusList) error {
	if o.printer != nil {
		return o.printer.PrintObj(l, w)
	}
	if o.PrintFlags.Name() {
		return printNames(w, status.KarmadaNames(l))
	}
	po := o.printOptions()
	if o.Service != "" {
		return status.DescribeKarmada(w, l, po)
	}
	if len(l.MultiClusterServices)+len(l.ServiceExports)+len(l.ServiceImports) == 0 {
		_, err := fmt.Fprintln(o.ErrOut, o.noneFound("MultiClusterServices, ServiceExports or ServiceImports"))
		return err
	}
	return status.PrintKarmada(w, l, po)
}

// watchKarmada keeps informers on the control plane and redraws whenever anything changes.
func (o *Options) watchKarmada(ctx context.Context) error {
	cp, err := o.connectKarmada()
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	read, err := cp.Watch(ctx, o.namespace, notify)
	if err != nil {
		return err
	}
	snapshot := func() (runtime.Object, error) {
		l := status.BuildKarmada(read())
		_ = o.filterKarmada(l)
		return l, nil
	}
	return o.redraw(ctx, changed, snapshot, func(w *bytes.Buffer, obj runtime.Object) error {
		return o.printKarmada(w, obj.(*status.KarmadaServiceStatusList))
	})
}
