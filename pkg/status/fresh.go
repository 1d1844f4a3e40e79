package status

// Freshness: whether the EndpointSlice copies a member holds say what their sources say. The
// copies compared against are those sync would write now, from this same read (engine.Compute),
// and the comparison is sync's own (snapshot.SliceDigest, as engine.Plan makes it): status never
// calls stale what sync would leave, nor fresh what it would rewrite.

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/parallel"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// wanted is what sync would write now: per cluster, the services it imports there and, per
// service, the copies it wants there.
type wanted struct {
	imports map[string]map[key]bool
	copies  map[string]map[key][]*discoveryv1.EndpointSlice
}

// computeWanted decides as sync does from the clusters read, for the services keys: the unread
// clusters are unread sources (their copies held), the last-known ones sources that get nothing
// written. The services are decided in shards, one per CPU: deciding every import of 10,000
// services is seconds of CPU, and each service's decision is its own.
func computeWanted(clusters []snapshot.Cluster, keys []key) wanted {
	obs := engine.Observed{}
	for i := range clusters {
		if c := &clusters[i]; c.HasData() {
			obs.Clusters = append(obs.Clusters, engine.ObservedCluster{ID: c.ID, Reachable: c.State == snapshot.Reachable, Objects: c.Objects})
		}
	}
	shards := 1
	if len(keys) >= 1000 { // below, indexing the clusters once per shard costs more than it saves
		shards = runtime.GOMAXPROCS(0)
	}
	decided := make([]engine.Desired, shards)
	parallel.For(shards, func(i int) {
		o := obs
		o.Services = keys[i*len(keys)/shards : (i+1)*len(keys)/shards]
		decided[i] = engine.Compute(o)
	})
	w := wanted{imports: map[string]map[key]bool{}, copies: map[string]map[key][]*discoveryv1.EndpointSlice{}}
	for _, d := range decided {
		for id, cd := range d.Clusters {
			if w.imports[id] == nil {
				w.imports[id], w.copies[id] = map[key]bool{}, map[key][]*discoveryv1.EndpointSlice{}
			}
			for _, si := range cd.ServiceImports {
				w.imports[id][key{Namespace: si.Namespace, Name: si.Name}] = true
			}
			for _, s := range cd.EndpointSlices {
				k := key{Namespace: s.Namespace, Name: s.Labels[mcsv1beta1.LabelServiceName]}
				w.copies[id][k] = append(w.copies[id][k], s)
			}
		}
	}
	return w
}

// freshness compares the copies ix holds of b's service with those sync wants there, per source
// cluster. Where sync would not import it (other problems say why) only the copies of unread
// sources are told, as such.
func (b *item) freshness(ix *index) []CopiesStatus {
	if ix.State != snapshot.Reachable {
		return nil
	}
	imported := b.want.imports[ix.ID][b.k]
	want, have := map[string][]*discoveryv1.EndpointSlice{}, map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range b.want.copies[ix.ID][b.k] {
		src := s.Labels[mcsv1beta1.LabelSourceCluster]
		want[src] = append(want[src], s)
	}
	for src, l := range ix.copies[b.k] {
		for _, s := range l {
			if names.IsManaged(s.Labels) { // another controller's copies are not sync's to compare
				have[src] = append(have[src], s)
			}
		}
	}
	srcs := make([]string, 0, len(want)+len(have))
	for src := range want {
		srcs = append(srcs, src)
	}
	for src := range have {
		if _, ok := want[src]; !ok {
			srcs = append(srcs, src)
		}
	}
	sort.Strings(srcs)
	var out []CopiesStatus
	for _, src := range srcs {
		if o := b.byID[src]; o == nil || o.State != snapshot.Reachable {
			// Its copies stand for it by design (sync holds them): not compared.
			out = append(out, CopiesStatus{Source: src, State: CopiesUnread})
			continue
		}
		if !imported {
			continue
		}
		out = append(out, compareCopies(b.k.Name, src, want[src], have[src], b.byID[src].Sources[b.k]))
	}
	return out
}

// compareCopies compares the copies held of source cluster src's slices (have) with those sync
// would write (want); sources are src's own slices of the service, for when each changed.
func compareCopies(service, src string, want, have, sources []*discoveryv1.EndpointSlice) CopiesStatus {
	c := CopiesStatus{Source: src, State: CopiesFresh}
	var sourceOf map[string]*discoveryv1.EndpointSlice // made when a copy differs: the names cost a hash each
	sourceNamed := func(copyName string) *discoveryv1.EndpointSlice {
		if sourceOf == nil {
			sourceOf = make(map[string]*discoveryv1.EndpointSlice, len(sources))
			for _, s := range sources {
				sourceOf[names.EndpointSliceName(service, src, s.Name)] = s
			}
		}
		return sourceOf[copyName]
	}
	held := make(map[string]*discoveryv1.EndpointSlice, len(have))
	for _, s := range have {
		held[s.Name] = s
	}
	since := func(t *metav1.Time, from SinceFrom) {
		if t != nil && (c.Since == nil || t.Before(c.Since)) {
			c.Since, c.SinceFrom = t, from
		}
	}
	wanted := make(map[string]bool, len(want))
	for _, w := range want {
		wanted[w.Name] = true
		o := held[w.Name]
		if o != nil && snapshot.SliceDigest(o) == snapshot.SliceDigest(w) {
			continue
		}
		c.Slices = append(c.Slices, w.Name)
		var t *metav1.Time
		if s := sourceNamed(w.Name); s != nil {
			t = lastChange(s.ObjectMeta)
		}
		if o != nil {
			if ct := lastChange(o.ObjectMeta); ct != nil && (t == nil || ct.After(t.Time)) {
				since(ct, SinceCopyChanged)
				continue
			}
		}
		since(t, SinceSourceChanged)
	}
	for _, o := range have {
		if !wanted[o.Name] {
			c.Slices = append(c.Slices, o.Name)
			since(lastChange(o.ObjectMeta), SinceSourceGoneAfter)
		}
	}
	if len(c.Slices) == 0 {
		return c
	}
	sort.Strings(c.Slices)
	c.State = CopiesStale
	d := snapshot.DiffEndpoints(want, have)
	c.Missing, c.Extra, c.OtherState, c.Other = d.Missing, d.Extra, d.Changed, d.Other
	if d.Empty() {
		c.Other = []string{"order"}
	}
	return c
}

// lastChange is an object's latest managedFields time: when some manager last changed it.
func lastChange(m metav1.ObjectMeta) *metav1.Time {
	var t *metav1.Time
	for _, e := range m.ManagedFields {
		if e.Time != nil && (t == nil || e.Time.After(t.Time)) {
			t = e.Time
		}
	}
	return t
}

// staleCopies adds a problem per stale source, naming the members whose copies of it differ
// alike, so that a source every member lags behind is told once.
func (b *item) staleCopies() {
	var order []string
	members := map[string][]string{}
	for _, cs := range b.out.Clusters {
		for _, c := range cs.Copies {
			if c.State != CopiesStale {
				continue
			}
			text := fmt.Sprintf("%q's endpoints in %%s are out of date: %s; %s.", c.Source, c.Differences(), c.SinceString())
			if members[text] == nil {
				order = append(order, text)
			}
			members[text] = append(members[text], cs.Cluster)
		}
	}
	for _, text := range order {
		b.problems = append(b.problems, "The copies of "+fmt.Sprintf(text, quoteJoin(members[text])))
	}
}

// shown is how many endpoints a list names before it says how many more there are.
const shown = 3

// Differences says what differs: "2 endpoints missing (10.1.0.1, 10.1.0.2), 1 extra (...),
// 1 in another state (10.1.0.3: ready=true in the source, ready=false in the copy)".
func (c CopiesStatus) Differences() string {
	var parts []string
	noun := "endpoints"
	add := func(n int, what string, items []string) {
		if n == 0 {
			return
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%d %s %s (%s)", n, plural(n, "endpoint", noun), what, firstOf(items)))
			return
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", n, what, firstOf(items)))
	}
	add(len(c.Missing), "missing", c.Missing)
	add(len(c.Extra), "extra", c.Extra)
	changed := make([]string, len(c.OtherState))
	for i, e := range c.OtherState {
		changed[i] = fmt.Sprintf("%s: %s in the source, %s in the copy", e.Addresses, e.Source, e.Copy)
	}
	add(len(changed), "in another state", changed)
	for _, o := range c.Other {
		if o == "order" {
			parts = append(parts, "the same endpoints, ordered or grouped into slices otherwise")
			continue
		}
		parts = append(parts, "other "+o)
	}
	return strings.Join(parts, ", ")
}

// firstOf lists the first items and how many more there are.
func firstOf(items []string) string {
	if len(items) <= shown {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:shown], "; "), len(items)-shown)
}

// SinceString says since when the copies are stale and what that was read from.
func (c CopiesStatus) SinceString() string {
	if c.Since == nil {
		return "since when, the objects do not tell (no managedFields times)"
	}
	at := c.Since.UTC().Format("2006-01-02T15:04:05Z")
	switch c.SinceFrom {
	case SinceCopyChanged:
		return "since " + at + ", the copy's last change (managedFields)"
	case SinceSourceGoneAfter:
		return "since after " + at + ", the last change of a copy whose source slice is gone (managedFields)"
	}
	return "since " + at + ", the source slice's last change (managedFields)"
}
