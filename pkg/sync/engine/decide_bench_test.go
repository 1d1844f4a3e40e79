package engine

import (
	"fmt"
	"testing"
)

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

// BenchmarkDecideOneMemberOf40 is a member's pipeline round at cold start in a clusterset of 40
// (two exporters): deciding for that member alone (Observed.For), against deciding for all and
// keeping that member's share, as the pipelines did. Run with -benchmem: the bytes are what
// converge's garbage grows with, members times over per service.
func BenchmarkDecideOneMemberOf40(b *testing.B) {
	obs := twoExporters()
	for i := 4; i <= 40; i++ {
		obs.Clusters = append(obs.Clusters, member(fmt.Sprintf("m%d", i)))
	}
	for _, mode := range []string{"all", "for"} {
		b.Run(mode, func(b *testing.B) {
			one := obs
			if mode == "for" {
				one.For = "m7"
			}
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, a := range Plan(one, Compute(one)) {
					if a.Cluster == "m7" {
						n++
					}
				}
				if n == 0 {
					b.Fatal("nothing planned in m7")
				}
			}
		})
	}
}
