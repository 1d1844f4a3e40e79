package statuscmd

import (
	"bytes"
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// status --watch's redraws fit printers.Width for typical services (three clusters, three
// ports, 20-character names, -A), whole: off a terminal nothing is cut, so the fit is the
// table's own.
func TestWatchWidth(t *testing.T) {
	now := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	item := func(ns, name string, h status.Health, exporting ...string) status.MultiClusterServiceStatus {
		return status.MultiClusterServiceStatus{Namespace: ns, Name: name, Health: h, CreationTimestamp: metav1.NewTime(now.Add(-7*time.Hour - 59*time.Minute)),
			Ports:             []status.Port{{Name: "http", Port: 8080, Protocol: "TCP"}, {Name: "admin", Port: 9090, Protocol: "TCP"}, {Name: "metrics", Port: 5000, Protocol: "UDP"}},
			Clusters:          []status.ClusterStatus{{Cluster: "member1"}, {Cluster: "member2"}, {Cluster: "member3", State: snapshot.Unreachable}},
			ExportingClusters: exporting, ImportingClusters: []string{"member1", "member2", "member3"},
			Endpoints: []status.SourceEndpoints{{Cluster: "member1", Ready: 12, Total: 12}, {Cluster: "member2", Ready: 10, Total: 12}}}
	}
	list := func(h status.Health) *status.MultiClusterServiceStatusList {
		return &status.MultiClusterServiceStatusList{Items: []status.MultiClusterServiceStatus{
			item("demo", "checkout-frontend-v2", h, "member1", "member2"), item("payments", "ledger-api-internal1", status.Conflict, "member1", "member2"),
		}}
	}
	var out bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}}, now: func() time.Time { return now }}
	o.PrintFlags = nil
	changed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	draws := 0
	snap := func() (runtime.Object, error) {
		draws++
		if draws == 1 {
			changed <- struct{}{}
			return list(status.Healthy), nil
		}
		cancel()
		return list(status.Degraded), nil
	}
	render := func(w *bytes.Buffer, obj runtime.Object) error {
		return status.PrintTable(w, obj.(*status.MultiClusterServiceStatusList), status.PrintOptions{Now: now, Color: true})
	}
	if err := o.redraw(ctx, changed, snap, render); err != nil {
		t.Fatal(err)
	}
	if draws != 2 || bytes.Count(out.Bytes(), []byte("NAMESPACE")) != 2 {
		t.Fatalf("%d draws:\n%s", draws, out.String())
	}
	for _, l := range printers.LongLines(out.String(), printers.Width) {
		t.Error(l)
	}
}
