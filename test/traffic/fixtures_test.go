//go:build traffic

package traffic

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// port is one port of an echo Service: the same number for the Service and the pods.
type port struct {
	name  string
	num   int
	proto string // TCP or UDP
}

var http80 = []port{{"http", 80, "TCP"}}

// namespace creates a namespace of its own in every member (imports go only where it exists) and
// deletes it afterwards; sync then withdraws what it imported there.
func namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := prefix + "-" + utilrand.String(5)
	for _, c := range members {
		must(t, kubectl(nil, c, "create", "namespace", ns), "create namespace in "+c)
	}
	t.Cleanup(func() {
		for _, c := range members {
			kubectl(nil, c, "delete", "namespace", ns, "--wait=false")
		}
	})
	return ns
}

// echo runs `replicas` echo pods named NAME in cluster c, answering on ports, and a Service of the
// same name over them (headless when headless is set), and waits for the pods to be Ready. Every
// echo pod is labelled role=echo too, for a Service over the pods of several Deployments.
func echo(t *testing.T, c, ns, name string, replicas int, ports []port, headless bool) {
	t.Helper()
	var tcp, udp, cports, sports []string
	for _, p := range ports {
		if p.proto == "UDP" {
			udp = append(udp, fmt.Sprint(p.num))
		} else {
			tcp = append(tcp, fmt.Sprint(p.num))
		}
		cports = append(cports, fmt.Sprintf("        - {containerPort: %d, protocol: %s}", p.num, p.proto))
		sports = append(sports, fmt.Sprintf("  - {name: %s, port: %d, targetPort: %d, protocol: %s}", p.name, p.num, p.num, p.proto))
	}
	clusterIP := ""
	if headless {
		clusterIP = "  clusterIP: None\n"
	}
	manifest := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s, role: echo}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: echo
        image: %[4]s
        args: ["-ports=%[5]s", "-udp-ports=%[6]s"]
        env:
        - {name: CLUSTER, value: %[7]s}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        ports:
%[8]s
        readinessProbe:
          exec: {command: ["true"]}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
%[9]s  selector: {app: %[1]s}
  ports:
%[10]s
`, name, ns, replicas, image, strings.Join(tcp, ","), strings.Join(udp, ","), c,
		strings.Join(cports, "\n"), clusterIP, strings.Join(sports, "\n"))
	must(t, kubectl([]byte(manifest), c, "apply", "-f", "-"), "echo "+name+" in "+c)
	rollout(t, c, ns, "deployment/"+name)
}

func rollout(t *testing.T, c, ns, what string) {
	t.Helper()
	must(t, kubectl(nil, c, "-n", ns, "rollout", "status", what, "--timeout=90s"), "rollout of "+what+" in "+c)
}

func scale(t *testing.T, c, ns, name string, replicas int) {
	t.Helper()
	must(t, kubectl(nil, c, "-n", ns, "scale", "deployment/"+name, fmt.Sprintf("--replicas=%d", replicas)), "scale "+name)
	if replicas > 0 {
		rollout(t, c, ns, "deployment/"+name)
	}
}

// client starts the pod requests are made from, in the consumer cluster, and returns its name.
func client(t *testing.T, ns string) string {
	t.Helper()
	return clientIn(t, consumer, ns)
}

// clientIn starts the pod requests are made from in cluster c.
func clientIn(t *testing.T, c, ns string) string {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: client, namespace: %s}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: client
    image: %s
    command: ["sleep", "infinity"]
`, ns, image)
	must(t, kubectl([]byte(manifest), c, "apply", "-f", "-"), "client pod in "+c)
	must(t, kubectl(nil, c, "-n", ns, "wait", "--for=condition=Ready", "pod/client", "--timeout=90s"), "client pod Ready in "+c)
	return "client"
}

// inClient runs a command in the client pod; a failing command is a result, not an error.
func inClient(ns string, cmd ...string) result {
	return inClientOf(consumer, ns, cmd...)
}

// inClientOf runs a command in the client pod of cluster c.
func inClientOf(c, ns string, cmd ...string) result {
	return kubectl(nil, c, append([]string{"-n", ns, "exec", "client", "--"}, cmd...)...)
}

// get makes one HTTP request from the client pod; the answer is "POD CLUSTER tcp PORT". An
// answer is what curl printed; what kubectl says beside it on stderr (a warning) is not.
func get(ns, host string, p int) (string, bool) {
	r := inClient(ns, "curl", "-sS", "--max-time", "2", fmt.Sprintf("http://%s:%d/", host, p))
	if r.code == 0 {
		return strings.TrimSpace(r.stdout), true
	}
	return strings.TrimSpace(r.stdout + r.stderr), false
}

// udp sends one datagram from the client pod and returns the answer.
func udp(ns, host string, p int) (string, bool) {
	r := inClient(ns, "sh", "-c", fmt.Sprintf("echo ping | nc -u -w 2 %s %d", host, p))
	out := strings.TrimSpace(r.stdout)
	return out + strings.TrimSpace(r.stderr), r.code == 0 && out != ""
}

// dig asks the client pod's resolver (the cluster's CoreDNS) and returns the status and the
// answer records' data.
func dig(ns, name, qtype string) (status string, answers []string) {
	r := inClient(ns, "dig", "+time=2", "+tries=2", "+noall", "+comments", "+answer", name, qtype)
	for _, l := range strings.Split(r.stdout, "\n") {
		if i := strings.Index(l, "status: "); i >= 0 {
			status = strings.TrimSuffix(strings.Fields(l[i+8:])[0], ",")
			continue
		}
		f := strings.Fields(l)
		if len(f) >= 5 && !strings.HasPrefix(l, ";") {
			answers = append(answers, strings.Join(f[4:], " "))
		}
	}
	sort.Strings(answers)
	if status == "" {
		status = "no answer: " + strings.TrimSpace(r.stdout+r.stderr)
	}
	return status, answers
}

// clusterOf reads the cluster out of an echo answer ("POD CLUSTER PROTO PORT").
func clusterOf(answer string) string {
	if f := strings.Fields(answer); len(f) == 4 {
		return f[1]
	}
	return ""
}

// answeredBy makes n requests and counts the answers by cluster ("" counts failures).
func answeredBy(n int, request func() (string, bool)) answers {
	a := answers{seen: map[string]int{}}
	for i := 0; i < n; i++ {
		out, ok := request()
		if !ok {
			a.seen[""]++
			a.failed = append(a.failed, out)
			continue
		}
		c := clusterOf(out)
		if c == "" {
			a.failed = append(a.failed, "an answer of no cluster: "+out)
		}
		a.seen[c]++
	}
	return a
}

// answers counts the requests by the cluster that answered ("": none), and keeps what the failed
// ones said, for the test's message.
type answers struct {
	seen   map[string]int
	failed []string
}

func (a answers) String() string {
	if len(a.failed) == 0 {
		return fmt.Sprint(a.seen)
	}
	return fmt.Sprintf("%v; failed: %q", a.seen, a.failed)
}

// clusterIP is the cluster IP of the derived Service sync made in the consumer.
func clusterIP(t *testing.T, ns, name string) string {
	t.Helper()
	var ip string
	eventually(t, 60*time.Second, "derived-"+name+" in "+consumer, func() (bool, string) {
		r := kubectl(nil, consumer, "-n", ns, "get", "service", "derived-"+name, "-o", "jsonpath={.spec.clusterIP}")
		ip = strings.TrimSpace(r.stdout)
		return r.code == 0 && ip != "", r.stderr
	})
	return ip
}

func expose(t *testing.T, ns, name string, contexts ...string) {
	t.Helper()
	must(t, mcs("expose", name, "-n", ns, "--contexts", strings.Join(contexts, ",")), "expose "+name)
}

func unexpose(t *testing.T, ns, name string, contexts ...string) {
	t.Helper()
	must(t, mcs("unexpose", name, "-n", ns, "--contexts", strings.Join(contexts, ",")), "unexpose "+name)
}

func clustersetName(name, ns string) string {
	return fmt.Sprintf("%s.%s.svc.clusterset.local", name, ns)
}

// quickStartRequest runs the README quick start's last commands as written (those of member2 in
// demo), the image aside, and returns what the last one printed.
func quickStartRequest(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, quick, _ := strings.Cut(string(readme), "## Quick start")
	quick, _, _ = strings.Cut(quick, "\n## ")
	var out result
	n := 0
	for _, line := range strings.Split(quick, "\n") {
		if !strings.HasPrefix(line, "kubectl --context member2 -n demo ") {
			continue
		}
		line = strings.ReplaceAll(line, "--image=curlimages/curl", "--image="+image)
		out = run(nil, "bash", "-c", "KUBECONFIG="+kubeconfig+" "+line)
		if out.code != 0 {
			t.Fatalf("README quick start: %s: exit %d: %s%s", line, out.code, out.stdout, out.stderr)
		}
		n++
	}
	if n < 2 {
		t.Fatalf("README quick start: %d commands of member2 in demo found, want the request and what prints it", n)
	}
	return strings.TrimSpace(out.stdout)
}
