package member

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// importerHeap is the heap the caches of an importing member (one that exports nothing) of the
// bench clusterset hold, per service: an import, a derived Service and a copy of each exporter's
// slice, perSlice endpoints each.
func importerHeap(t testing.TB, services, perSlice int) float64 {
	clusters := []string{"member1", "member2", "member3", "member4", "member5"}
	before := heapInUse()
	stores, _ := fillCaches(t, 4, clusters, services, perSlice)
	after := heapInUse()
	runtime.KeepAlive([]([]cache.Indexer){stores})
	return float64(after-before) / float64(services)
}

// A member added costs sync what it holds of each service it imports, and nothing per endpoint:
// its copies are cached as metadata and a digest.
func TestImportingMemberCostsNothingPerEndpoint(t *testing.T) {
	two, fifty := importerHeap(t, 1000, 2), importerHeap(t, 1000, 50)
	t.Logf("an importing member's caches: %.0f B per service at 2 endpoints a slice, %.0f B at 50", two, fifty)
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
