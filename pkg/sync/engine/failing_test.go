package engine

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// A write that keeps failing is told on every constituent export, in Ready (Failed), naming the
// object, its cluster and the apiserver's answer; it changes nothing else that is desired.
func TestFailingWriteIsToldOnTheExports(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{
		exporter("member3", 0, "10.3.0.1", port("", 80, "")),
		exporter("member1", 5, "10.1.0.1", port("8080-8080", 8080, "")),
		importer("member2"),
	}}
	if _, left := converge(&obs, 6); len(left) != 0 {
		t.Fatalf("no convergence: %q", summary(left))
	}
	before := Compute(obs)
	refused := `Service "derived-cart" is invalid: spec.ports[0].name: Required value`
	obs.Failing = []WriteFailure{
		{Service: nn("shop", "cart"), Cluster: "member2", Kind: snapshot.KindService, Namespace: "shop", Name: "derived-cart", Message: refused},
		{Service: nn("shop", "other"), Cluster: "member2", Kind: snapshot.KindService, Namespace: "shop", Name: "derived-other", Message: "not this one"},
	}
	d := Compute(obs)
	want := `Service shop/derived-cart in "member2" cannot be written: ` + refused + "."
	for _, id := range []string{"member1", "member3"} {
		ready := findCond(d.Clusters[id].ExportConditions[nn("shop", "cart")], mcsv1beta1.ServiceExportConditionReady)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(mcsv1beta1.ServiceExportReasonFailed) || ready.Message != want {
			t.Errorf("%s: Ready %+v\nwant False, Failed, %q", id, ready, want)
		}
	}
	for id, cd := range d.Clusters {
		b := before.Clusters[id]
		if !reflect.DeepEqual(cd.ServiceImports, b.ServiceImports) || !reflect.DeepEqual(cd.Services, b.Services) ||
			!reflect.DeepEqual(cd.EndpointSlices, b.EndpointSlices) || !reflect.DeepEqual(cd.Held, b.Held) {
			t.Errorf("%s: a failing write changed what is desired", id)
		}
	}

	// Once it is written, Ready is True again.
	obs.Failing = nil
	ready := findCond(Compute(obs).Clusters["member1"].ExportConditions[nn("shop", "cart")], mcsv1beta1.ServiceExportConditionReady)
	if ready.Reason == string(mcsv1beta1.ServiceExportReasonFailed) {
		t.Errorf("Ready %+v without failures", ready)
	}
}
