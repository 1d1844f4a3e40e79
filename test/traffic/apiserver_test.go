//go:build traffic

package traffic

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// The ServiceAccount files the kubelet mounts in every pod (in-cluster config reads them).
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Pods reach the apiservers as sync's and the DNS server's pods do in production: their own with
// in-cluster config (kubernetes.default.svc or KUBERNETES_SERVICE_HOST, the ServiceAccount's token
// and ca.crt), another member's at the address pods use for it (node.sh env: APISERVER_NAME) with
// that member's CA and a token of its own; TLS verified every time. The apiserver that answers is
// told by the ServiceAccount UID it reports for the token.
func TestAPIServersFromPods(t *testing.T) {
	remote := "member1"
	remoteURL, localURL := os.Getenv("APISERVER_"+remote), os.Getenv("APISERVER_"+consumer)
	if remoteURL == "" || localURL == "" {
		t.Fatalf("APISERVER_%s and APISERVER_%s must be set (node.sh env prints them; run: make test-traffic)", remote, consumer)
	}
	ns := namespace(t, "apiserver")

	// The kubernetes Service of the consumer leads to the address its apiserver advertises.
	u, err := url.Parse(localURL)
	if err != nil {
		t.Fatalf("APISERVER_%s=%q: %v", consumer, localURL, err)
	}
	r := must(t, kubectl(nil, consumer, "-n", "default", "get", "endpointslices", "-l", "kubernetes.io/service-name=kubernetes",
		"-o", "jsonpath={.items[*].endpoints[*].addresses[*]}:{.items[*].ports[*].port}"), "the kubernetes EndpointSlice")
	if got := strings.TrimSpace(r.stdout); got != u.Host {
		t.Fatalf("%s: the kubernetes EndpointSlice lists %q, want %q (the advertised address)", consumer, got, u.Host)
	}

	// member1's CA, as the bed's kubeconfig has it, and a token of member1's default ServiceAccount
	// in ns: what a kubeconfig for member1 embedded in a pod of member2 holds.
	localSA, remoteSA := serviceAccountUID(t, consumer, ns), serviceAccountUID(t, remote, ns)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ca.crt"), caOf(t, remote))
	token := must(t, kubectl(nil, remote, "-n", ns, "create", "token", "default", "--duration=10m"), "token in "+remote).stdout
	writeFile(t, filepath.Join(dir, "token"), []byte(strings.TrimSpace(token)))
	must(t, kubectl(nil, consumer, "-n", ns, "create", "secret", "generic", remote,
		"--from-file=ca.crt="+filepath.Join(dir, "ca.crt"), "--from-file=token="+filepath.Join(dir, "token")), "secret "+remote)

	manifest := `apiVersion: v1
kind: Pod
metadata: {name: apiclient, namespace: ` + ns + `}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: client
    image: ` + image + `
    command: ["sh", "-c", "echo started; exec sleep infinity"]
    volumeMounts: [{name: remote, mountPath: /remote, readOnly: true}]
  volumes: [{name: remote, secret: {secretName: ` + remote + `}}]
`
	must(t, kubectl([]byte(manifest), consumer, "apply", "-f", "-"), "pod apiclient")
	must(t, kubectl(nil, consumer, "-n", ns, "wait", "--for=condition=Ready", "pod/apiclient", "--timeout=90s"), "pod apiclient Ready")

	want, err := clients[consumer].Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("%s: version: %v", consumer, err)
	}
	var v struct{ GitVersion string }
	decode(t, must(t, inPod(ns, "curl -sS --fail --max-time 5 --cacert "+saDir+"/ca.crt https://kubernetes.default.svc/version"),
		"in-cluster /version from "+consumer), &v)
	if v.GitVersion != want.GitVersion {
		t.Fatalf("https://kubernetes.default.svc/version from a pod of %s: %q, want %q", consumer, v.GitVersion, want.GitVersion)
	}
	// What client-go's in-cluster config does: the Service's IP from the environment, the token.
	who := whoAmI(t, ns, "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT", saDir)
	if wantUser := "system:serviceaccount:" + ns + ":default"; who.Username != wantUser || who.UID != localSA {
		t.Fatalf("in-cluster self review in %s: %s (uid %s), want %s (uid %s)", consumer, who.Username, who.UID, wantUser, localSA)
	}

	// member1's apiserver at its bed address, with member1's CA and token.
	decode(t, must(t, inPod(ns, "curl -sS --fail --max-time 5 --cacert /remote/ca.crt "+remoteURL+"/version"),
		remote+" /version from a pod of "+consumer), &v)
	if v.GitVersion == "" {
		t.Fatalf("%s/version from a pod of %s: no gitVersion", remoteURL, consumer)
	}
	if who := whoAmI(t, ns, remoteURL, "/remote"); who.UID != remoteSA {
		t.Fatalf("self review at %s from a pod of %s: %s (uid %s), want the ServiceAccount of %s (uid %s)",
			remoteURL, consumer, who.Username, who.UID, remote, remoteSA)
	}
	// The verification is real: member2's CA does not vouch for member1's apiserver.
	if r := inPod(ns, "curl -sS --max-time 5 --cacert "+saDir+"/ca.crt "+remoteURL+"/version"); r.code != 60 {
		t.Fatalf("%s with %s's CA: exit %d, want 60 (certificate not verified): %s%s", remoteURL, consumer, r.code, r.stdout, r.stderr)
	}

	// The apiserver still reaches the kubelet (exec above, logs here).
	if r := must(t, kubectl(nil, consumer, "-n", ns, "logs", "apiclient"), "logs of apiclient"); strings.TrimSpace(r.stdout) != "started" {
		t.Fatalf("logs of apiclient: %q, want \"started\"", r.stdout)
	}
}

func inPod(ns, script string) result {
	return kubectl(nil, consumer, "-n", ns, "exec", "apiclient", "--", "sh", "-c", script)
}

type userInfo struct{ Username, UID string }

// whoAmI posts a SelfSubjectReview to server with the token and CA in dir (inside the pod).
func whoAmI(t *testing.T, ns, server, dir string) userInfo {
	t.Helper()
	r := must(t, inPod(ns, `curl -sS --fail --max-time 5 --cacert `+dir+`/ca.crt -H "Authorization: Bearer $(cat `+dir+`/token)" `+
		`-H 'Content-Type: application/json' -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' `+
		server+`/apis/authentication.k8s.io/v1/selfsubjectreviews`), "self review at "+server)
	var review struct {
		Status struct{ UserInfo userInfo }
	}
	decode(t, r, &review)
	return review.Status.UserInfo
}

func decode(t *testing.T, r result, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), into); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
}

// serviceAccountUID waits for the default ServiceAccount of ns in cluster c (the controller
// manager makes it) and returns its UID.
func serviceAccountUID(t *testing.T, c, ns string) string {
	t.Helper()
	var uid string
	eventually(t, 30*time.Second, "ServiceAccount default in "+c, func() (bool, string) {
		sa, err := clients[c].CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		uid = string(sa.UID)
		return true, ""
	})
	return uid
}

// caOf is the CA the bed's kubeconfig trusts for cluster c.
func caOf(t *testing.T, c string) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ok := cfg.Contexts[c]
	if !ok || cfg.Clusters[ctx.Cluster] == nil || len(cfg.Clusters[ctx.Cluster].CertificateAuthorityData) == 0 {
		t.Fatalf("%s: no certificate-authority-data for context %s", kubeconfig, c)
	}
	return cfg.Clusters[ctx.Cluster].CertificateAuthorityData
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
