package install

import (
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// What sync's memory is sized from (docs/running-in-a-cluster.md, "Memory"). The costs are the
// heap its informer caches hold, measured with pkg/member's bench clusterset and a fit over 2 and
// 20 endpoints per slice: about 1.6 KiB per cached object and 0.25 KiB per cached endpoint; the
// objects sync wrote (imports, derived Services, copies) are cached as records (pkg/member),
// about 0.9 KiB each, their endpoints as a digest, so only the members' own slices count
// endpoints. Each member costs about 1 MiB more, whatever it holds: its clients, watches and
// informers (41-49 MiB live at 40 members of 100 services, where the caches held 16 MiB). Base
// is the rest of the process (buffers, metrics, a sync's own garbage).
const (
	bytesPerObject   = 1650
	bytesPerRecord   = 900
	bytesPerEndpoint = 250
	bytesPerMember   = 1 << 20
	baseBytes        = 64 << 20
)

// The smallest request and limit given, whatever the clusterset holds now: it grows.
var (
	minRequest = resource.MustParse("128Mi")
	minLimit   = resource.MustParse("512Mi")
)

// MemoryLimitEnv carries the container's memory limit, in bytes, to sync, which keeps its heap
// under 90% of it (the Go runtime's soft memory limit, as GOMEMLIMIT sets it).
const MemoryLimitEnv = "KUBECTL_MCS_MEMORY_LIMIT"

// Footprint is what sync holds of a clusterset: its Members, and in their caches objects
// (Services, EndpointSlices, ServiceExports, ServiceImports, namespaces), of which Records are
// sync's own, and the endpoints of every slice, in every member.
type Footprint struct {
	Members, Objects, Records, Endpoints int
}

// Count is the footprint of the members once sync has imported every exported service: what each
// member holds now, except what sync made there (imports, derived Services, copies of ours), and
// what sync makes for every exported service in every member that has its namespace: an import,
// a derived Service and a copy of each exporter's slices of it, cached without its endpoints.
// With own set (a sync --local for that member ID), the other members' derived Services and
// copies are not cached (member.Config.Local): there an exported service costs its import alone.
func Count(clusters []snapshot.Cluster, own string) Footprint {
	f := Footprint{Members: len(clusters)} // one not read costs its clients all the same
	type key struct{ ns, name string }
	sources := map[key]int{} // the exporters' slices, by service
	exported := map[key]bool{}
	for _, c := range clusters {
		if !c.HasData() {
			continue
		}
		f.Objects += len(c.ServiceExports)
		for _, ns := range c.Namespaces {
			// The namespace install makes is left out: a second install sizes as the first.
			if ns != DefaultNamespace {
				f.Objects++
			}
		}
		for _, s := range c.Services {
			if !names.IsManaged(s.Labels) {
				f.Objects++
			}
		}
		for _, i := range c.ServiceImports {
			if !names.IsManaged(i.Labels) {
				f.Objects++
			}
		}
		exports := map[key]bool{}
		for _, e := range c.ServiceExports {
			exports[key{e.Namespace, e.Name}] = true
			exported[key{e.Namespace, e.Name}] = true
		}
		for _, s := range c.EndpointSlices {
			if names.IsManaged(s.Labels) {
				continue
			}
			f.Objects++
			f.Endpoints += len(s.Endpoints)
			if k := (key{s.Namespace, s.Labels[discoveryv1.LabelServiceName]}); !snapshot.IsCopy(s) && exports[k] {
				sources[k]++
			}
		}
	}
	for _, c := range clusters {
		if !c.HasData() {
			continue
		}
		has := map[string]bool{}
		for _, ns := range c.Namespaces {
			has[ns] = true
		}
		for k := range exported {
			if !has[k.ns] {
				continue
			}
			n := 2 + sources[k]
			if own != "" && c.ID != own {
				n = 1
			}
			f.Objects += n
			f.Records += n
		}
	}
	return f
}

// Memory is the request and the limit of sync's container for f: the request what the caches
// and the process hold after a collection, the limit twice the caches (the Go collector lets
// the heap grow to twice what is live before it collects, GOGC=100) and the process; neither
// below the minimums, rounded up to MiB.
func (f Footprint) Memory() (request, limit resource.Quantity) {
	live := f.live()
	return atLeast(mebibytes(baseBytes+live), minRequest), atLeast(mebibytes(baseBytes+2*live), minLimit)
}

// live is what the rule says the caches and clients of f hold after a collection, in bytes.
func (f Footprint) live() int64 {
	return int64(f.Members)*bytesPerMember + int64(f.Objects-f.Records)*bytesPerObject + int64(f.Records)*bytesPerRecord + int64(f.Endpoints)*bytesPerEndpoint
}

func mebibytes(b int64) resource.Quantity {
	return *resource.NewQuantity((b+(1<<20)-1)>>20<<20, resource.BinarySI)
}

func atLeast(q, floor resource.Quantity) resource.Quantity {
	if q.Cmp(floor) < 0 {
		return floor.DeepCopy()
	}
	return q
}

func orDefault(q, d resource.Quantity) resource.Quantity {
	if q.IsZero() {
		return d.DeepCopy()
	}
	return q
}

// Resources are the container's memory request and limit; zero values take the minimums.
type Resources struct {
	Request, Limit resource.Quantity
}

// ParseMemory reads --memory-request and --memory-limit ("" : from the rule) over what the rule
// gives (rule: not called when both are set). A request above the limit is an error when both
// are given; when only one is, the rule's other value moves to it.
func ParseMemory(request, limit string, rule func() (resource.Quantity, resource.Quantity)) (Resources, error) {
	var r Resources
	for _, f := range []struct {
		flag, value string
		into        *resource.Quantity
	}{{"--memory-request", request, &r.Request}, {"--memory-limit", limit, &r.Limit}} {
		if f.value == "" {
			continue
		}
		q, err := resource.ParseQuantity(f.value)
		if err != nil {
			return Resources{}, fmt.Errorf("%s %q: %w", f.flag, f.value, err)
		}
		if q.Sign() <= 0 {
			return Resources{}, fmt.Errorf("%s %q: must be greater than 0", f.flag, f.value)
		}
		*f.into = q
	}
	if request != "" && limit != "" {
		if r.Request.Cmp(r.Limit) > 0 {
			return Resources{}, fmt.Errorf("--memory-request %s is above --memory-limit %s", request, limit)
		}
		return r, nil
	}
	req, lim := rule()
	if request == "" {
		r.Request = req
	}
	if limit == "" {
		r.Limit = lim
	}
	if r.Request.Cmp(r.Limit) > 0 {
		if request != "" {
			r.Limit = r.Request.DeepCopy()
		} else {
			r.Request = r.Limit.DeepCopy()
		}
	}
	return r, nil
}
