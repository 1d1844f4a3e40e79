// Command resolve asks a member's clusterset DNS a question the way a Pod would: it runs CoreDNS
// on 127.0.0.1 with the Corefile of the member's kube-system/coredns ConfigMap (as `kubectl mcs
// init --dns` left it), prints the answer, and stops it. `make demo` ends with it.
//
//	go run ./test/testbed/resolve -kubeconfig KUBECONFIG -context member2 serve.demo.svc.clusterset.local
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-mcs/kubectl-mcs/internal/corednshost"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the test bed")
	kctx := flag.String("context", "member2", "the member whose resolver answers")
	qtype := flag.String("type", "A", "query type (A, AAAA, SRV)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: resolve [-context CTX] [-type A|AAAA|SRV] NAME")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *kctx, flag.Arg(0), dns.StringToType[*qtype]); err != nil {
		fmt.Fprintln(os.Stderr, "resolve:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, kctx, name string, qtype uint16) error {
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
	ctx := context.Background()
	cm, err := kc.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", kctx, err)
	}
	port, err := corednshost.FreePort()
	if err != nil {
		return err
	}
	conf, err := corednshost.ForHost(cm.Data["Corefile"], kubeconfig, kctx, port)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kubectl-mcs-resolve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := corednshost.Start(ctx, corednshost.Binary(), dir, conf, port, 90*time.Second)
	if err != nil {
		return err
	}
	defer p.Stop()
	r, err := corednshost.Query(p.Addr, name, qtype)
	if err != nil {
		return err
	}
	fmt.Printf(";; %s's resolver (CoreDNS pid %d on %s): %s\n", kctx, p.PID(), p.Addr, dns.RcodeToString[r.Rcode])
	for _, rr := range r.Answer {
		fmt.Println(rr.String())
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return fmt.Errorf("%s: no answer for %s", kctx, name)
	}
	return nil
}
