package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

const (
	packetBeginMark = "<!-- bench-first-packet:begin (written by make bench, on real nodes) -->"
	packetEndMark   = "<!-- bench-first-packet:end -->"
)

// packetBench measures time to first packet on a real-node bed: a provider (member1) and a
// consumer (member2). Each figure is taken twice at once: through the clusterset (a probe pod in
// member2 asking NAME.NS.svc.clusterset.local, carried by sync --watch and the DNS server) and
// through the floor (a probe pod in member1 asking a plain local Service over the same pods).
type packetBench struct {
	c                  config
	image, dnsServer   string
	provider, consumer kubernetes.Interface
	ns                 string
}

// probe is a pod running echo -probe; lines carries "UNIX-NANOS ANSWER" as it prints them.
type probe struct {
	lines chan [2]string
}

func runFirstPacket(ctx context.Context, c config, image, dnsServer string) (string, error) {
	b := &packetBench{c: c, image: image, dnsServer: dnsServer, ns: "packets-" + utilrand.String(5)}
	var err error
	if b.provider, err = kubeClient(c.kubeconfig, c.contexts[0]); err != nil {
		return "", err
	}
	if b.consumer, err = kubeClient(c.kubeconfig, c.contexts[1]); err != nil {
		return "", err
	}
	pair := strings.Join(c.contexts[:2], ",")
	for _, args := range [][]string{{"init", "--contexts", pair}, {"init", "--contexts", pair, "--dns", "--dns-server", dnsServer}} {
		if out, err := exec.Command(c.binary, append([]string{"--kubeconfig", c.kubeconfig}, args...)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("kubectl mcs %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	for _, k := range []kubernetes.Interface{b.provider, b.consumer} {
		if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns}}, metav1.CreateOptions{}); err != nil {
			return "", err
		}
		defer k.CoreV1().Namespaces().Delete(context.Background(), b.ns, metav1.DeleteOptions{}) //nolint:errcheck
	}
	sync := exec.Command(c.binary, "--kubeconfig", c.kubeconfig, "sync", "--watch", "--contexts", pair)
	dieWithBench(sync)
	if err := sync.Start(); err != nil {
		return "", err
	}
	defer func() { _ = sync.Process.Signal(syscall.SIGTERM); _ = sync.Wait() }()

	if err := b.serve(ctx); err != nil {
		return "", err
	}
	var rows []packetRow
	for _, m := range []func(context.Context) ([]packetRow, error){b.exposeToFirst, b.readyToFirst} {
		r, err := m(ctx)
		if err != nil {
			return "", err
		}
		rows = append(rows, r...)
	}
	return packetTable(c.samples, rows), nil
}

// serve starts the provider's pods (one replica) behind the Service "serve".
func (b *packetBench) serve(ctx context.Context) error {
	labels := map[string]string{"app": "serve"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "serve"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name: "echo", Image: b.image, Args: []string{"-ports=8080"},
						Env:            []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
					}},
				},
			},
		},
	}
	if _, err := b.provider.AppsV1().Deployments(b.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := b.service(ctx, "serve"); err != nil {
		return err
	}
	return waitUntil(ctx, 90*time.Second, "serve's pod Ready", func() bool { return len(b.readyPods(ctx)) == 1 })
}

func (b *packetBench) service(ctx context.Context, name string) error {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "serve"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	_, err := b.provider.CoreV1().Services(b.ns).Create(ctx, s, metav1.CreateOptions{})
	return err
}

// readyPods are the names of serve's Ready pods.
func (b *packetBench) readyPods(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	pods, err := b.provider.CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=serve"})
	if err != nil {
		return out
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				out[p.Name] = true
			}
		}
	}
	return out
}

// startProbe runs a probe pod in cluster k asking url, and follows its log.
func (b *packetBench) startProbe(ctx context.Context, k kubernetes.Interface, name, url string) (*probe, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "probe", Image: b.image, Args: []string{"-probe", url, "-interval", "20ms"}}},
		},
	}
	if _, err := k.CoreV1().Pods(b.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if err := waitUntil(ctx, 90*time.Second, "probe "+name+" running", func() bool {
		p, err := k.CoreV1().Pods(b.ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	}); err != nil {
		return nil, err
	}
	stream, err := k.CoreV1().Pods(b.ns).GetLogs(name, &corev1.PodLogOptions{Follow: true}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	p := &probe{lines: make(chan [2]string, 100000)}
	go func() {
		defer stream.Close()
		sc := bufio.NewScanner(stream)
		for sc.Scan() {
			if f := strings.SplitN(sc.Text(), " ", 2); len(f) == 2 {
				p.lines <- [2]string{f[0], f[1]}
			}
		}
		close(p.lines)
	}()
	return p, nil
}

// first waits for the first answer from a pod for which match holds, and returns its time.
func (p *probe) first(timeout time.Duration, match func(pod string) bool) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return time.Time{}, fmt.Errorf("probe log ended")
			}
			if l[1] != "-" && match(strings.Fields(l[1])[0]) {
				return nanos(l[0]), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("no answer within %s", timeout)
		}
	}
}

func nanos(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n)
}

func waitUntil(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: not within %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func clustersetURL(name, ns string) string {
	return fmt.Sprintf("http://%s.%s.svc.clusterset.local./", name, ns)
}
func localURL(name, ns string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local./", name, ns)
}

func kubeClient(kubeconfig, ctx string) (kubernetes.Interface, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	cfg, err := (&clusterset.Loader{ConfigFlags: flags}).RESTConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("context %s: %w", ctx, err)
	}
	return kubernetes.NewForConfig(cfg)
}
