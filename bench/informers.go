package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// The memory floor: the peak RSS of a process that only holds client-go informers of the kinds
// sync watches (Services, EndpointSlices, Namespaces, ServiceExports and ServiceImports; protobuf
// where offered, the mcs-api kinds unstructured), in the same namespace of the same clusters, as
// any controller built the usual way would. Run in a child process (the bench itself, with
// -informer-floor) so that its RSS is its own.

const informerFloorFlag = "informer-floor"

// informerFloor runs the child and returns its peak RSS in MiB.
func (b *bench) informerFloor(ctx context.Context) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, self, "-"+informerFloorFlag, "-kubeconfig", b.kubeconfig, "-contexts", strings.Join(b.contexts, ",")).Output()
	if err != nil {
		return 0, fmt.Errorf("informer floor: %w", err)
	}
	return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
}

// holdInformers is the child: it syncs the informers and prints its peak RSS in MiB.
func holdInformers(kubeconfig string, contexts []string) error {
	if err := startInformers(context.Background(), kubeconfig, contexts, ns, syncKinds); err != nil {
		return err
	}
	rss, err := peakRSS(os.Getpid())
	if err != nil {
		return err
	}
	fmt.Printf("%.1f\n", rss)
	return nil
}

// Which informers startInformers runs: sync's, or those the bench watches converge with.
type informerKinds int

const (
	syncKinds  informerKinds = iota // Services, EndpointSlices, Namespaces, ServiceExports, ServiceImports
	benchKinds                      // EndpointSlices, ServiceExports, ServiceImports (watchAll)
)

// startInformers runs informers of kinds in namespace n of every context until ctx ends, and
// returns once they have synced.
func startInformers(ctx context.Context, kubeconfig string, contexts []string, n string, kinds informerKinds) error {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	loader := &clusterset.Loader{ConfigFlags: flags}
	var synced []cache.InformerSynced
	for _, name := range contexts {
		cfg, err := loader.RESTConfig(name)
		if err != nil {
			return err
		}
		pb := rest.CopyConfig(cfg)
		pb.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		pb.ContentType = "application/vnd.kubernetes.protobuf"
		kc, err := kubernetes.NewForConfig(pb)
		if err != nil {
			return err
		}
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		kf := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(n))
		df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, n, nil)
		infs := []cache.SharedIndexInformer{kf.Discovery().V1().EndpointSlices().Informer(),
			df.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceExports)).Informer(),
			df.ForResource(mcsapi.GVR(mcsapi.V1beta1, mcsapi.ServiceImports)).Informer()}
		if kinds == syncKinds {
			infs = append(infs, kf.Core().V1().Services().Informer(), kf.Core().V1().Namespaces().Informer())
		}
		for _, inf := range infs {
			synced = append(synced, inf.HasSynced)
		}
		kf.Start(ctx.Done())
		df.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("informers did not sync")
	}
	return nil
}
