package snapshot

import (
	"reflect"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// Each difference the digest covers is named once, by the endpoint's addresses.
func TestDiffEndpoints(t *testing.T) {
	want := digestSlice()
	if d := DiffEndpoints([]*discoveryv1.EndpointSlice{want}, []*discoveryv1.EndpointSlice{digestSlice()}); !d.Empty() {
		t.Errorf("equal slices: %+v", d)
	}
	have := digestSlice()
	have.Endpoints[0].Conditions.Ready = p(false)
	have.Endpoints[0].Zone = nil
	have.Endpoints[1].Addresses = []string{"10.0.0.9"}
	have.Ports[0].Port = p[int32](81)
	d := DiffEndpoints([]*discoveryv1.EndpointSlice{want}, []*discoveryv1.EndpointSlice{have})
	exp := EndpointDiff{Missing: []string{"10.0.0.2,10.0.0.3"}, Extra: []string{"10.0.0.9"},
		Changed: []EndpointChange{{Addresses: "10.0.0.1", Source: "ready=true,zone=a", Copy: "ready=false,zone=unset"}}, Other: []string{"ports"}}
	if !reflect.DeepEqual(d, exp) {
		t.Errorf("got %+v\nwant %+v", d, exp)
	}
	// Order alone: the digests differ, nothing else does.
	have = digestSlice()
	have.Endpoints[0], have.Endpoints[1] = have.Endpoints[1], have.Endpoints[0]
	if SliceDigest(have) == SliceDigest(want) || !DiffEndpoints([]*discoveryv1.EndpointSlice{want}, []*discoveryv1.EndpointSlice{have}).Empty() {
		t.Errorf("order: the digest should differ and nothing else")
	}
}
