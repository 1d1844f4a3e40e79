package engine

import "testing"

// BenchmarkDecideEndpointChange is the engine's part of carrying one endpoint change: a converged
// service of two exporters in three clusters, one source slice with a new address, decided
// (Compute, then Plan: one slice update per cluster). What sync spends before its writes start.
func BenchmarkDecideEndpointChange(b *testing.B) {
	obs := twoExporters()
	if _, left := converge(&obs, 6); len(left) != 0 {
		b.Fatal("did not converge")
	}
	src := obs.Clusters[0].EndpointSlices
	for i, s := range src {
		if s.Name == "serve-a" {
			s = s.DeepCopy()
			s.Endpoints[0].Addresses = []string{"10.1.0.9"}
			src[i] = s
		}
	}
	if n := len(Plan(obs, Compute(obs))); n != 3 {
		b.Fatalf("%d actions, want one slice update per cluster", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		Plan(obs, Compute(obs))
	}
}
