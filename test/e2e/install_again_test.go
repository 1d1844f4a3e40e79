//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/install"
)

// TestInstallTwiceChangesNothing: in host mode, a second install with the same flags prints
// only unchanged and changes no resourceVersion of anything it installed (the host member gets
// its ServiceAccount from both of install's halves); a changed --member-server changes the
// kubeconfig Secret and with it the pod template, which rolls the pods.
func TestInstallTwiceChangesNothing(t *testing.T) {
	uninstall(t)
	t.Cleanup(func() { uninstall(t) })
	args := []string{"install", "--contexts", allMembers, "--context", "member1", memberServers(t, "member2", "member3"), "--image=kubectl-mcs/kubectl-mcs:e2e", noWait}
	installAgain(t, args, mustMCS(t, args...).stdout)

	template := func() string {
		d, err := clients["member1"].kube.AppsV1().Deployments(install.DefaultNamespace).Get(context.Background(), install.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Annotations[install.KubeconfigChecksumAnnotation]
	}
	before := template()
	moved := strings.Replace(server(t, "member3"), "127.0.0.1", "127.0.0.2", 1)
	r := mustMCS(t, "install", "--contexts", allMembers, "--context", "member1", "--image=kubectl-mcs/kubectl-mcs:e2e", noWait,
		"--member-server=member2="+server(t, "member2")+",member3="+moved)
	for _, want := range []string{"member1: secret/" + install.KubeconfigSecret + " configured", "member1: deployment.apps/" + install.Name + " configured"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("a changed --member-server: no line %q:\n%s", want, r.stdout)
		}
	}
	if after := template(); after == before || after == "" {
		t.Errorf("the pod template's kubeconfig checksum %q, before %q: the pods would not roll", after, before)
	}
}

// installAgain runs install (args) again once what the first run (which printed stdout) wrote has
// settled, and fails unless the second printed the same objects, each unchanged, and left every
// resourceVersion as it was.
func installAgain(t *testing.T, args []string, stdout string) {
	t.Helper()
	first := installedObjects(t, stdout)
	before := settled(t, func() versions { return installedVersions(t, first) })
	r := mustMCS(t, args...)
	again := installedObjects(t, r.stdout)
	if len(again) != len(first) {
		t.Errorf("the second install wrote %d objects, the first %d:\n%s", len(again), len(first), r.stdout)
	}
	for _, o := range again {
		if o.op != "unchanged" {
			t.Errorf("a second install: %s %s", o.key(), o.op)
		}
	}
	after := installedVersions(t, first)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("a second install changed %s: resourceVersion %s, then %s", k, v, after[k])
		}
	}
}

// installedObject is one line of install's output.
type installedObject struct {
	cluster, resource, name, namespace, op string
}

func (o installedObject) key() string {
	return o.cluster + " " + o.resource + " " + o.namespace + "/" + o.name
}

var installLine = regexp.MustCompile(`^(\S+): ([^/\s]+)/(\S+) (created|configured|unchanged)(?: -n (\S+))?$`)

func installedObjects(t *testing.T, stdout string) []installedObject {
	t.Helper()
	var out []installedObject
	for _, l := range nonEmptyLines(stdout) {
		m := installLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a line of install: %q", l)
		}
		out = append(out, installedObject{cluster: m[1], resource: m[2], name: m[3], op: m[4], namespace: m[5]})
	}
	if len(out) == 0 {
		t.Fatal("install printed nothing")
	}
	return out
}

// installedVersions reads the resourceVersion of every object, by key (the resources as install
// names them, kubectl's singular.group, mapped by each member's discovery).
func installedVersions(t *testing.T, objs []installedObject) versions {
	t.Helper()
	mappers := map[string]*restmapper.DeferredDiscoveryRESTMapper{}
	out := versions{}
	for _, o := range objs {
		if mappers[o.cluster] == nil {
			mappers[o.cluster] = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(clients[o.cluster].kube.Discovery()))
		}
		resource, group, _ := strings.Cut(o.resource, ".")
		gvr, err := mappers[o.cluster].ResourceFor(schema.GroupVersionResource{Group: group, Resource: resource})
		if err != nil {
			t.Fatalf("%s: %v", o.key(), err)
		}
		u, err := clients[o.cluster].dyn.Resource(gvr).Namespace(o.namespace).Get(context.Background(), o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", o.key(), err)
		}
		out[o.key()] = u.GetResourceVersion()
	}
	return out
}
