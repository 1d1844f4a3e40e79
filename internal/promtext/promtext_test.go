package promtext

import (
	"strings"
	"testing"
)

const sample = `# HELP kubectl_mcs_writes_total API writes by cluster, kind and verb.
# TYPE kubectl_mcs_writes_total counter
kubectl_mcs_writes_total{cluster="member1",kind="EndpointSlice",verb="create"} 4
kubectl_mcs_writes_total{cluster="member2",kind="EndpointSlice",verb="create"} 3
kubectl_mcs_writes_total{cluster="member2",kind="ServiceImport",verb="update"} 2
kubectl_mcs_writes_total_extra 100
kubectl_mcs_queue_depth 0
kubectl_mcs_sync_duration_seconds_count 7
`

func TestSum(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
		found  bool
	}{
		{"kubectl_mcs_writes_total", nil, 9, true},
		{"kubectl_mcs_writes_total", []string{`cluster="member2"`}, 5, true},
		{"kubectl_mcs_writes_total", []string{`cluster="member2"`, `kind="ServiceImport"`}, 2, true},
		{"kubectl_mcs_writes_total", []string{`cluster="member3"`}, 0, false},
		{"kubectl_mcs_queue_depth", nil, 0, true},
		{"kubectl_mcs_sync_duration_seconds_count", nil, 7, true},
		{"kubectl_mcs_conflicts", nil, 0, false},
	} {
		got, found, err := Sum(strings.NewReader(sample), c.name, c.labels...)
		if err != nil || got != c.want || found != c.found {
			t.Errorf("Sum(%s, %v) = %v, %v, %v; want %v, %v", c.name, c.labels, got, found, err, c.want, c.found)
		}
	}
	if _, _, err := Sum(strings.NewReader("kubectl_mcs_queue_depth x\n"), "kubectl_mcs_queue_depth"); err == nil {
		t.Error("a malformed sample was accepted")
	}
}
