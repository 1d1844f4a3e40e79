// Command nodedns is a real-node cluster's DNS, as kubeadm's CoreDNS Deployment would be: it runs
// CoreDNS inside the node's network namespace on NODE-IP:53 (the kubelet's clusterDNS) with the
// Corefile of the member's kube-system/coredns ConfigMap, and reloads CoreDNS (SIGUSR1) whenever
// that ConfigMap changes, so pods resolve with exactly what `kubectl mcs init --dns` wrote.
// Nothing is changed but what a host process needs: the kubernetes plugin reads the apiserver
// through -kubeconfig, and the host-bound plugins (health, ready, prometheus) are dropped.
//
//	nodedns -kubeconfig NODE-KUBECONFIG -context CTX -bind NODE-IP -coredns BIN -dir DIR
//
// Started by test/testbed/node.sh with nsenter --net; SIGTERM stops CoreDNS and then itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/internal/corednshost"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig the node's processes use")
	kctx := flag.String("context", "", "context in -kubeconfig")
	bind := flag.String("bind", "", "address CoreDNS listens on (port 53)")
	binary := flag.String("coredns", "", "CoreDNS binary")
	dir := flag.String("dir", "", "directory for the Corefile")
	flag.Parse()
	if *bind == "" || *binary == "" || *dir == "" {
		log.Fatal("nodedns: -bind, -coredns and -dir are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *kctx, *bind, *binary, *dir); err != nil {
		log.Fatalf("nodedns: %v", err)
	}
}

func run(ctx context.Context, kubeconfig, kctx, bind, binary, dir string) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kctx}).ClientConfig()
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "Corefile")
	changed := make(chan string, 1)
	lw := cache.NewListWatchFromClient(kc.CoreV1().RESTClient(), "configmaps", "kube-system",
		fields.OneTermEqualSelector("metadata.name", "coredns"))
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { offer(changed, o) },
			UpdateFunc: func(_, o any) { offer(changed, o) },
		},
	})
	go informer.Run(ctx.Done())

	var cmd *exec.Cmd
	var last string
	defer func() {
		if cmd != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case corefile := <-changed:
			conf, err := corednshost.ForHost(corefile, kubeconfig, kctx, 53)
			if err != nil {
				log.Printf("nodedns: kube-system/coredns: %v (keeping the running Corefile)", err)
				continue
			}
			conf = strings.ReplaceAll(conf, "bind 127.0.0.1", "bind "+bind)
			if conf == last {
				continue
			}
			if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
				return err
			}
			last = conf
			if cmd == nil {
				cmd = exec.Command(binary, "-conf", path)
				cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
				if err := cmd.Start(); err != nil {
					return fmt.Errorf("start coredns: %w", err)
				}
				log.Printf("nodedns: coredns pid %d on %s:53", cmd.Process.Pid, bind)
				go func(c *exec.Cmd) { _ = c.Wait(); log.Printf("nodedns: coredns exited: %v", c.ProcessState) }(cmd)
				continue
			}
			// CoreDNS re-reads its Corefile on SIGUSR1 and keeps the old one when the new fails.
			log.Printf("nodedns: kube-system/coredns changed: reloading coredns")
			_ = cmd.Process.Signal(syscall.SIGUSR1)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// offer keeps only the newest Corefile waiting.
func offer(ch chan string, o any) {
	cm, ok := o.(*corev1.ConfigMap)
	if !ok {
		return
	}
	select {
	case <-ch:
	default:
	}
	ch <- cm.Data["Corefile"]
}
