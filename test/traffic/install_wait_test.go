//go:build traffic

package traffic

// install waits (make test-production, both modes): a wrong --member-server fails it within its
// --timeout, naming the member and the address; the right one, given again, rolls the pods by
// the kubeconfig checksum and takes effect with no restart by hand.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wrongServerTimeout is the failing install's --timeout.
const wrongServerTimeout = 60 * time.Second

// install with member3 at a closed port of its apiserver's address: it fails within its
// --timeout, naming member3, the address and what the leader of the new pods got, from every
// member whose pods read member3 there (the host; per member the others). While they cannot read
// it, member3's new endpoint does not reach member2, and member2's requests to member3's serve go
// on being answered (a member never read is never taken as not exporting). install with the
// right address then succeeds, and the new endpoint reaches every member. The bed ends as it
// was: the same flags, the same image, the same kubeconfig Secret.
func TestInstallWaitWrongServer(t *testing.T) {
	requireProduction(t)
	image := installedImage(t)
	wrong := closedPort(t, apiservers()["member3"])
	ns, name := served(t, "wrongserver", "member3")
	before := readyAddresses(t, "member3", ns, "kubernetes.io/service-name=serve")
	restored := false
	t.Cleanup(func() {
		if !restored {
			install(image, perMember)
		}
	})

	requests := loop(t, ns, "requests", fmt.Sprintf("curl -sS --max-time 2 http://%s/", name))
	start := time.Now()
	r := installAt(image, perMember, map[string]string{"member3": wrong}, wrongServerTimeout)
	took := time.Since(start)
	t.Logf("install with member3 at %s: exit %d after %.1f s:\n%s", wrong, r.code, took.Seconds(), r.stderr)
	if r.code == 0 {
		t.Fatalf("install with member3 at %s succeeded", wrong)
	}
	// The writes before the wait take seconds: the member tokens are there already.
	if took > wrongServerTimeout+30*time.Second {
		t.Errorf("install took %s with --timeout=%s", took.Round(time.Second), wrongServerTimeout)
	}
	for _, c := range syncMembers() {
		if c == "member3" {
			continue
		}
		if want := fmt.Sprintf("cluster %q: the sync pods in %q cannot read it at %s: ", "member3", c, wrong); !strings.Contains(r.stderr, "\n  "+want) {
			t.Errorf("no line naming member3 and %s from the pods in %s: want %q", wrong, c, want)
		}
	}

	must(t, kubectl(nil, "member3", "-n", ns, "scale", "deployment/serve", "--replicas=2"), "scale serve in member3")
	added := newAddress(t, ns, before)
	time.Sleep(2 * syncRound)
	if readyAddresses(t, consumer, ns, "multicluster.kubernetes.io/service-name=serve")[added] {
		t.Errorf("member3's new endpoint %s reached %s while its pods read member3 at %s: the wrong address did not take effect", added, consumer, wrong)
	}

	must(t, install(image, perMember), "kubectl mcs install with the right address")
	restored = true
	propagationFrom(t, ns, "member3", before, "member1", consumer)
	requests.expectNoFailure(t)
}

// installedImage is the image of the sync Deployment as installed.
func installedImage(t *testing.T) string {
	t.Helper()
	d, err := clients[syncMembers()[0]].AppsV1().Deployments(systemNS).Get(context.Background(), syncName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the installed sync: %v", err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// closedPort is server at port 1, where nothing listens.
func closedPort(t *testing.T, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("member3's apiserver address %q: %v", server, err)
	}
	u.Host = net.JoinHostPort(u.Hostname(), "1")
	return u.String()
}

// newAddress waits for a ready endpoint of serve in member3 that was not in before.
func newAddress(t *testing.T, ns string, before map[string]bool) string {
	t.Helper()
	var added string
	eventually(t, 2*time.Minute, "a new ready endpoint of serve in member3", func() (bool, string) {
		for a := range readyAddresses(t, "member3", ns, "kubernetes.io/service-name=serve") {
			if !before[a] {
				added = a
			}
		}
		return added != "", ""
	})
	return added
}
