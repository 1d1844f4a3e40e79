//go:build traffic

package traffic

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PreferSameZone across clusters with real kube-proxies: member1's node is put in member2's node's
// zone, serve runs in member1 and member3 with trafficDistribution PreferSameZone, and every copy
// carries each endpoint's own zone. member2's pods are then answered by member1 alone (the same
// zone, another cluster) and member3's by member3 alone; without the hints both would spread.
func TestPreferSameZone(t *testing.T) {
	shared, same, other := nodeZone(t, consumer), "member1", "member3"
	own := nodeZone(t, same)
	// Endpoints take their node's zone when the EndpointSlice controller writes them: relabel
	// before serve's pods exist.
	setZone(t, same, shared)
	t.Cleanup(func() { setZone(t, same, own) })
	ns := namespace(t, "zone")
	for _, c := range []string{same, other} {
		echo(t, c, ns, "serve", 2, http80, false)
		must(t, kubectl(nil, c, "-n", ns, "patch", "service", "serve", "--type=merge",
			"-p", `{"spec":{"trafficDistribution":"PreferSameZone"}}`), "PreferSameZone on serve in "+c)
	}
	clientIn(t, consumer, ns)
	clientIn(t, other, ns)
	expose(t, ns, "serve", members...)

	want := map[string][]string{same: {shared, shared}, other: {nodeZone(t, other), nodeZone(t, other)}}
	for _, c := range []string{consumer, other} {
		eventually(t, 60*time.Second, c+"'s copies hinted with each endpoint's zone "+fmt.Sprint(want), func() (bool, string) {
			h := hints(t, c, ns, "serve")
			return slices.Equal(h[same], want[same]) && slices.Equal(h[other], want[other]) && len(h) == 2, fmt.Sprint(h)
		})
	}
	url := "http://" + clustersetName("serve", ns) + "/"
	for c, by := range map[string]string{consumer: same, other: other} {
		eventually(t, 60*time.Second, "50 requests from "+c+" answered by "+by+" alone", func() (bool, string) {
			a := burst(c, ns, url, 50)
			return a.seen[by] == 50, a.String()
		})
		t.Logf("50 requests from %s (zone %s): all answered by %s", c, nodeZone(t, c), by)
	}
}

// setZone labels cluster c's node with zone.
func setZone(t *testing.T, c, zone string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, corev1.LabelTopologyZone, zone)
	if _, err := clients[c].CoreV1().Nodes().Patch(context.Background(), c+"-node", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("%s: zone %s on its node: %v", c, zone, err)
	}
}
