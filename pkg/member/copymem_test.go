package member

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// importerHeap is the heap the caches of an importing member (one that exports nothing) of the
// bench clusterset add, per service, beside the four others in the same process (as sync holds
// them: a label set shared by several members is held once): an import, a derived Service and a
// copy of each exporter's slice, perSlice endpoints each.
func importerHeap(t testing.TB, services, perSlice int) float64 {
	clusters := []string{"member1", "member2", "member3", "member4", "member5"}
	var others [][]cache.Indexer
	for c := range 4 {
		s, _ := fillCaches(t, c, clusters, services, perSlice)
		others = append(others, s)
	}
	before := heapInUse()
	stores, _ := fillCaches(t, 4, clusters, services, perSlice)
	after := heapInUse()
	runtime.KeepAlive(others)
	runtime.KeepAlive(stores)
	return float64(after-before) / float64(services)
}

// A member added costs sync what it holds of each service it imports, under 4 KiB of heap, and
// nothing per endpoint: what sync wrote is cached as records, its copies' endpoints as a digest.
func TestImportingMemberCostsNothingPerEndpoint(t *testing.T) {
	two, fifty := importerHeap(t, 1000, 2), importerHeap(t, 1000, 50)
	t.Logf("an importing member's caches: %.0f B per service at 2 endpoints a slice, %.0f B at 50", two, fifty)
	// The target (issue: forty clusters) is 4 MiB of RSS per member added at 1,000 services; the
	// caches must leave room in it for the member's watches and clients.
	if two > 4096 {
		t.Errorf("an importing member's caches cost %.0f B per service: over 4 MiB a member at 1,000 services", two)
	}
	if fifty > two*1.2 {
		t.Errorf("at 50 endpoints a slice an importing member costs %.0f B per service, %.0f%% more than at 2 (%.0f B): a copy costs per endpoint", fifty, 100*(fifty/two-1), two)
	}
}

// BenchmarkImportingMemberBytes reports an importing member's cache heap per service.
func BenchmarkImportingMemberBytes(b *testing.B) {
	for _, per := range []int{2, 50} {
		b.Run(fmt.Sprintf("endpoints=%d", per), func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(importerHeap(b, 1000, per), "B/service")
			}
		})
	}
}
