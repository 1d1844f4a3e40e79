package status

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// connectKarmada builds the clients of the --context cluster and finds what it serves.
func (o *Options) connectKarmada() (*status.KarmadaControlPlane, error) {
	name := o.controlPlaneName()
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", name, err)
	}
	return status.ConnectKarmada(name, cfg)
}

// controlPlaneName is how output and errors name the control plane: its context.
func (o *Options) controlPlaneName() string {
	if c := o.ConfigFlags.Context; c != nil && *c != "" {
		return *c
	}
	if raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig(); err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	return "karmada"
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
	if !o.Watch && len(l.MultiClusterServices)+len(l.ServiceExports)+len(l.ServiceImports) == 0 {
		return fmt.Errorf("cluster %q: no MultiClusterService, ServiceExport or ServiceImport %s/%s on the Karmada control plane", l.ControlPlane, o.namespace, o.Service)
	}
	return nil
}

func (o *Options) printKarmada(w io.Writer, l *status.KarmadaServiceStatusList) error {
	if o.printer != nil {
		return o.printer.PrintObj(l, w)
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
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	kf := informers.NewSharedInformerFactoryWithOptions(cp.Kube, 0, informers.WithNamespace(o.namespace))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(cp.Dyn, 0, o.namespace, nil)
	cdf := dynamicinformer.NewDynamicSharedInformerFactory(cp.Dyn, 0)
	svcInf := kf.Core().V1().Services()
	listers := map[*schema.GroupVersionResource]cache.GenericLister{}
	infs := []cache.SharedIndexInformer{svcInf.Informer()}
	for _, gvr := range []*schema.GroupVersionResource{cp.MCS, cp.Exports, cp.Imports, cp.PPs} {
		if gvr != nil {
			gi := df.ForResource(*gvr)
			listers[gvr], infs = gi.Lister(), append(infs, gi.Informer())
		}
	}
	if cp.CPPs != nil {
		gi := cdf.ForResource(*cp.CPPs)
		listers[cp.CPPs], infs = gi.Lister(), append(infs, gi.Informer())
	}
	var synced []cache.InformerSynced
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		synced = append(synced, inf.HasSynced)
	}
	kf.Start(ctx.Done())
	df.Start(ctx.Done())
	cdf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("cluster %q: caches not synced", cp.Name)
	}
	objs := func(gvr *schema.GroupVersionResource) []*unstructured.Unstructured {
		if gvr == nil {
			return nil
		}
		l, _ := listers[gvr].List(labels.Everything())
		out := make([]*unstructured.Unstructured, 0, len(l))
		for _, x := range l {
			if u, ok := x.(*unstructured.Unstructured); ok {
				out = append(out, u)
			}
		}
		return out
	}
	snapshot := func() (runtime.Object, error) {
		in := status.KarmadaInput{ControlPlane: cp.Name, MultiClusterServices: objs(cp.MCS),
			ServiceExports: objs(cp.Exports), ServiceImports: objs(cp.Imports),
			Policies: append(objs(cp.PPs), objs(cp.CPPs)...)}
		svcs, _ := svcInf.Lister().List(labels.Everything())
		for _, s := range svcs {
			in.Services = append(in.Services, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
		l := status.BuildKarmada(in)
		_ = o.filterKarmada(l)
		return l, nil
	}
	return o.redraw(ctx, changed, snapshot, func(w *bytes.Buffer, obj runtime.Object) error {
		return o.printKarmada(w, obj.(*status.KarmadaServiceStatusList))
	})
}
