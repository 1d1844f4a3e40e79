//go:build traffic

package traffic

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// The seed scenario (../shared/seeds 001/004): serve in member1, exported, and a request from a
// pod in member2 to derived-serve's cluster IP and to serve.demo.svc.clusterset.local answered by
// member1's pod; no pod answers while member1 has none, and they answer again once it has.
func TestSeedScenario(t *testing.T) {
	ns := "demo"
	for _, c := range members {
		kubectl(nil, c, "create", "namespace", ns)
	}
	t.Cleanup(func() {
		for _, c := range members {
			kubectl(nil, c, "delete", "namespace", ns, "--wait=false")
		}
	})
	echo(t, "member1", ns, "serve", 1, http80, false)
	client(t, ns)
	expose(t, ns, "serve", members...)
	ip := clusterIP(t, ns, "serve")
	name := clustersetName("serve", ns)

	for _, host := range []string{ip, name} {
		eventually(t, 60*time.Second, "a request from member2 to "+host+" answered by member1", func() (bool, string) {
			a, ok := get(ns, host, 80)
			return ok && clusterOf(a) == "member1", a
		})
	}
	status, answers := dig(ns, name, "A")
	if status != "NOERROR" || len(answers) != 1 || answers[0] != ip {
		t.Fatalf("%s A: %s %v, want NOERROR [%s] (the ClusterSetIP)", name, status, answers, ip)
	}
	if status, answers := dig(ns, name, "AAAA"); status != "NOERROR" || len(answers) != 0 {
		t.Fatalf("%s AAAA: %s %v, want NOERROR with no record (an IPv4 ClusterSetIP)", name, status, answers)
	}
	status, answers = dig(ns, "_http._tcp."+name, "SRV")
	if status != "NOERROR" || len(answers) != 1 || !strings.HasSuffix(answers[0], "80 "+name+".") {
		t.Fatalf("_http._tcp.%s SRV: %s %v, want one record on port 80 for %s", name, status, answers, name)
	}
	if a := quickStartRequest(t); clusterOf(a) != "member1" {
		t.Fatalf("the README quick start's last command printed %q, want member1's answer", a)
	}

	scale(t, "member1", ns, "serve", 0)
	eventually(t, 60*time.Second, "requests fail while member1 has no pod", func() (bool, string) {
		a, ok := get(ns, ip, 80)
		return !ok, a
	})
	scale(t, "member1", ns, "serve", 1)
	eventually(t, 60*time.Second, "requests answered by member1 again", func() (bool, string) {
		a, ok := get(ns, name, 80)
		return ok && clusterOf(a) == "member1", a
	})
}

// Two exporting clusters both answer; once one unexports, only the other does.
func TestTwoExporters(t *testing.T) {
	ns := namespace(t, "two")
	echo(t, "member1", ns, "serve", 1, http80, false)
	echo(t, "member3", ns, "serve", 1, http80, false)
	client(t, ns)
	expose(t, ns, "serve", members...)
	name := clustersetName("serve", ns)
	request := func() (string, bool) { return get(ns, name, 80) }
	eventually(t, 90*time.Second, "member1 and member3 both answer", func() (bool, string) {
		a := answeredBy(20, request)
		return a.seen["member1"] > 0 && a.seen["member3"] > 0 && a.seen[""] == 0, a.String()
	})

	unexpose(t, ns, "serve", "member3")
	eventually(t, 60*time.Second, "only member1 answers after member3 unexports", func() (bool, string) {
		a := answeredBy(20, request)
		return a.seen["member1"] == 20, a.String()
	})
}

// TCP and UDP on the same port number, each carried to the pods.
func TestTCPAndUDP(t *testing.T) {
	ns := namespace(t, "proto")
	echo(t, "member1", ns, "dual", 1, []port{{"tcp", 7000, "TCP"}, {"udp", 7000, "UDP"}}, false)
	client(t, ns)
	expose(t, ns, "dual", members...)
	ip := clusterIP(t, ns, "dual")
	eventually(t, 60*time.Second, "TCP 7000 answered by member1", func() (bool, string) {
		a, ok := get(ns, ip, 7000)
		return ok && strings.HasSuffix(a, " member1 tcp 7000"), a
	})
	eventually(t, 60*time.Second, "UDP 7000 answered by member1", func() (bool, string) {
		a, ok := udp(ns, clustersetName("dual", ns), 7000)
		return ok && strings.HasSuffix(a, " member1 udp 7000"), a
	})
}

// A port that only member1's Service has is routed to member1 alone, while the shared port
// reaches both clusters.
func TestPortOfOneCluster(t *testing.T) {
	ns := namespace(t, "port")
	echo(t, "member1", ns, "serve", 1, []port{{"http", 80, "TCP"}, {"admin", 81, "TCP"}}, false)
	echo(t, "member3", ns, "serve", 1, http80, false)
	client(t, ns)
	expose(t, ns, "serve", members...)
	name := clustersetName("serve", ns)
	eventually(t, 90*time.Second, "port 80 answered by both clusters", func() (bool, string) {
		a := answeredBy(20, func() (string, bool) { return get(ns, name, 80) })
		return a.seen["member1"] > 0 && a.seen["member3"] > 0 && a.seen[""] == 0, a.String()
	})
	// Port 81 is asserted once it answers: port 80's answers say nothing of port 81's rules.
	eventually(t, 60*time.Second, "port 81 answered by member1", func() (bool, string) {
		a, ok := get(ns, name, 81)
		return ok && clusterOf(a) == "member1", a
	})
	a := answeredBy(20, func() (string, bool) { return get(ns, name, 81) })
	if a.seen["member1"] != 20 {
		t.Fatalf("port 81 (member1's only): answers by cluster %v, want all 20 from member1", a)
	}
}

// A Service that is not exported has no clusterset name and no route; one that was exported and
// is no more loses both.
func TestNotExported(t *testing.T) {
	ns := namespace(t, "hidden")
	echo(t, "member1", ns, "hidden", 1, http80, false)
	echo(t, "member1", ns, "shown", 1, http80, false)
	client(t, ns)
	hidden := clustersetName("hidden", ns)
	if status, answers := dig(ns, hidden, "A"); status != "NXDOMAIN" {
		t.Fatalf("%s (never exported): %s %v, want NXDOMAIN", hidden, status, answers)
	}
	if a, ok := get(ns, hidden, 80); ok {
		t.Fatalf("%s (never exported) answered: %s", hidden, a)
	}

	expose(t, ns, "shown", members...)
	shown := clustersetName("shown", ns)
	eventually(t, 60*time.Second, shown+" answered", func() (bool, string) {
		a, ok := get(ns, shown, 80)
		return ok && clusterOf(a) == "member1", a
	})
	ip := clusterIP(t, ns, "shown")
	unexpose(t, ns, "shown", members...)
	eventually(t, 60*time.Second, shown+" NXDOMAIN after unexpose", func() (bool, string) {
		status, answers := dig(ns, shown, "A")
		return status == "NXDOMAIN", fmt.Sprint(status, answers)
	})
	if a, ok := get(ns, ip, 80); ok {
		t.Fatalf("the former ClusterSetIP %s still answered after unexpose: %s", ip, a)
	}
}

// A headless StatefulSet in two clusters: the service's clusterset name resolves to the ready pods
// of both, and each pod has a name of its own, HOSTNAME.CLUSTERID.NAME.NS.svc.clusterset.local,
// which resolves to that pod only (member1's web-0 and member3's web-0 are told apart) and
// reaches it.
func TestHeadlessStatefulSet(t *testing.T) {
	ns := namespace(t, "sts")
	replicas := map[string]int{"member1": 2, "member3": 1}
	for c, n := range replicas {
		statefulSet(t, c, ns, n)
	}
	client(t, ns)
	expose(t, ns, "web", members...)

	all := clustersetName("web", ns)
	var want []string
	ips := map[string]string{} // HOSTNAME.CLUSTERID -> pod IP
	for c, n := range replicas {
		for i := 0; i < n; i++ {
			pod := fmt.Sprintf("web-%d", i)
			r := must(t, kubectl(nil, c, "-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.podIP}"), pod+" in "+c)
			ips[pod+"."+c] = strings.TrimSpace(r.stdout)
			want = append(want, ips[pod+"."+c])
		}
	}
	sort.Strings(want)
	eventually(t, 60*time.Second, all+" resolves to the pods of both clusters", func() (bool, string) {
		status, answers := dig(ns, all, "A")
		return status == "NOERROR" && strings.Join(answers, ",") == strings.Join(want, ","), fmt.Sprint(status, answers, " want ", want)
	})
	for host, ip := range ips {
		name := host + "." + all
		status, answers := dig(ns, name, "A")
		if status != "NOERROR" || len(answers) != 1 || answers[0] != ip {
			t.Fatalf("%s: %s %v, want [%s]", name, status, answers, ip)
		}
		pod, cluster, _ := strings.Cut(host, ".")
		a, ok := get(ns, name, 80)
		if !ok || !strings.HasPrefix(a, pod+" "+cluster+" ") {
			t.Fatalf("request to %s: %q, want an answer from %s of %s", name, a, pod, cluster)
		}
	}
	if status, _ := dig(ns, "web-1.member3."+all, "A"); status != "NXDOMAIN" {
		t.Fatalf("web-1.member3.%s (member3 runs one replica): %s, want NXDOMAIN", all, status)
	}
}

// statefulSet runs web, n echo pods answering on port 80, behind the headless Service web.
func statefulSet(t *testing.T, c, ns string, n int) {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: %[1]s}
spec:
  serviceName: web
  replicas: %[3]d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: echo
        image: %[2]s
        args: ["-ports=80"]
        env:
        - {name: CLUSTER, value: %[4]s}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
`, ns, image, n, c)
	must(t, kubectl([]byte(manifest), c, "apply", "-f", "-"), "web StatefulSet in "+c)
	rollout(t, c, ns, "statefulset/web")
}
