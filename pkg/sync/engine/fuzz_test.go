package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

type byteSrc struct {
	b []byte
	i int
}

func (s *byteSrc) next() int {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return int(s.b[s.i-1])
}

func (s *byteSrc) pick(n int) int { return s.next() % n }

var fuzzPorts = []corev1.ServicePort{
	{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
	{Name: "http", Port: 81, Protocol: corev1.ProtocolTCP},
	{Name: "web", Port: 80},
	{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
	{Name: "", Port: 80},
	{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP, AppProtocol: ptr("h2")},
	{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP},
	{Name: "http", Port: 80, Protocol: corev1.ProtocolUDP},
	{Name: "", Port: 8080, Protocol: corev1.ProtocolTCP},
	{Name: "8080-8080", Port: 8080, Protocol: corev1.ProtocolTCP},
	{Name: "tcp-80", Port: 81, Protocol: corev1.ProtocolTCP}, // the name an unnamed 80/TCP gets in a union
	{Name: "", Port: 53, Protocol: corev1.ProtocolUDP},
}

// genObserved builds a small clusterset from fuzz bytes; small pools make collisions (ties,
// port clashes, shared names) frequent.
func genObserved(b []byte) Observed {
	s := &byteSrc{b: b}
	obs := Observed{Now: now}
	nClusters := 1 + s.pick(4)
	for ci := 0; ci < nClusters; ci++ {
		c := ObservedCluster{ID: string(rune('a' + ci)), Reachable: s.pick(4) != 0, Objects: snapshot.Objects{Namespaces: []string{"ns1"}}}
		// Its identity: unknown, its own, or a's (two contexts of one cluster).
		c.UID = []string{"", "uid-" + c.ID, "uid-" + c.ID, "uid-a"}[s.pick(4)]
		c.Topology = fuzzTopology(ci)
		if s.pick(2) == 0 {
			c.Namespaces = append(c.Namespaces, "ns2")
		}
		for _, ns := range c.Namespaces {
			for _, name := range []string{"s1", "s2"} {
				flags := s.next()
				if flags&1 != 0 {
					e := mkExport(ns, name, s.pick(3))
					e.Annotations = fuzzChoice(name)
					if s.pick(3) == 0 {
						e.Spec.ExportedLabels = map[string]string{"tier": []string{"web", "db"}[s.pick(2)]}
					}
					if s.pick(4) == 0 {
						e.Spec.ExportedAnnotations = map[string]string{"note": "x"}
					}
					if s.pick(8) == 0 {
						e.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "True", Reason: "Valid", LastTransitionTime: at(1)}}
					}
					c.ServiceExports = append(c.ServiceExports, e)
				}
				if flags&2 != 0 {
					var ports []corev1.ServicePort
					for n := 1 + s.pick(3); n > 0; n-- {
						ports = append(ports, fuzzPorts[s.pick(len(fuzzPorts))])
					}
					svc := mkService(ns, name, ports...)
					switch s.pick(8) {
					case 0, 1:
						svc.Spec.ClusterIP = corev1.ClusterIPNone
					case 2:
						svc.Spec.Type = corev1.ServiceTypeExternalName
					}
					if s.pick(4) == 0 {
						svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
						if s.pick(2) == 0 {
							svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
						}
					}
					svc.Spec.InternalTrafficPolicy = []*corev1.ServiceInternalTrafficPolicy{nil, nil,
						ptr(corev1.ServiceInternalTrafficPolicyLocal), ptr(corev1.ServiceInternalTrafficPolicyCluster)}[s.pick(4)]
					svc.Spec.TrafficDistribution = []*string{nil, nil, nil, ptr("PreferClose"), nil, nil, ptr("PreferSameZone"), ptr("PreferSameNode")}[s.pick(8)]
					svc.Spec.IPFamilies = [][]corev1.IPFamily{{"IPv4"}, {"IPv4"}, {"IPv6"}, {"IPv4", "IPv6"}}[s.pick(4)]
					c.Services = append(c.Services, svc)
				}
				if flags&4 != 0 {
					for n := 1 + s.pick(2); n > 0; n-- {
						host := s.pick(250)
						sl := mkSlice(ns, name, fmt.Sprintf("%s-%d", name, n), fmt.Sprintf("10.%d.0.%d", ci, host))
						sl.Endpoints[0].Zone = fuzzZone(host)
						if svc := lastService(c, ns, name); svc != nil && s.pick(4) != 0 {
							sl.Ports = slicePorts(svc) // as the EndpointSlice controller writes them
						}
						c.EndpointSlices = append(c.EndpointSlices, sl)
					}
				}
				if flags&8 != 0 { // one of our own copies, labelled like a source: must never be read
					sl := mkSlice(ns, name, name+"-copy", "10.99.0.1")
					sl.Labels[names.EndpointSliceManagedByLabel] = names.EndpointSliceManagedByValue
					sl.Labels[mcsv1beta1.LabelSourceCluster] = "zz"
					c.EndpointSlices = append(c.EndpointSlices, sl)
				}
				if flags&16 != 0 && flags&32 != 0 {
					c.ServiceImports = append(c.ServiceImports, &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
				} else if flags&64 != 0 { // what a sync wrote under "old", recorded as some cluster's identity
					c.ServiceImports = append(c.ServiceImports, formerRecord(ns, name, "uid-"+string(rune('a'+s.pick(5)))))
					c.EndpointSlices = append(c.EndpointSlices, formerCopy(ns, name))
				}
			}
		}
		obs.Clusters = append(obs.Clusters, c)
	}
	if s.pick(2) == 0 {
		for _, c := range obs.Clusters {
			obs.Members = append(obs.Members, c.ID)
		}
	}
	return obs
}

// fuzzZone is the zone of an endpoint whose address ends in host: most have one, some none or
// one no hint may name; drawn from bytes already read, so that the seeds keep their meaning.
func fuzzZone(host int) *string {
	switch host % 8 {
	case 0:
		return nil
	case 1:
		return ptr("")
	case 2:
		return ptr("not a zone!")
	case 3, 4:
		return ptr("z2")
	}
	return ptr("z1")
}

// formerRecord is an import of ours naming the cluster "old", recorded with identity uid.
func formerRecord(ns, name, uid string) *mcsv1beta1.ServiceImport {
	return &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels:      map[string]string{names.ManagedByLabel: names.ManagedByValue},
		Annotations: map[string]string{names.SourceClusterUIDsAnnotation: "old=" + uid}},
		Spec:   mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP},
		Status: mcsv1beta1.ServiceImportStatus{Clusters: []mcsv1beta1.ClusterStatus{{Cluster: "old"}}}}
}

// formerCopy is a copy of ours of an endpoint of "old".
func formerCopy(ns, name string) *discoveryv1.EndpointSlice {
	sl := mkSlice(ns, names.DerivedServiceName(name), names.EndpointSliceName(name, "old", name+"-x"), "10.98.0.1")
	sl.Labels = map[string]string{names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, names.ManagedByLabel: names.ManagedByValue,
		mcsv1beta1.LabelServiceName: name, mcsv1beta1.LabelSourceCluster: "old", discoveryv1.LabelServiceName: names.DerivedServiceName(name)}
	return sl
}

// checkFormer: what was recorded under "old" is held, as a stranger's only when no read cluster
// is known to have been "old"; no copy is ever made under it.
func checkFormer(t *testing.T, obs Observed, d Desired) {
	former := FormerIDs(obs)
	if obs.Members == nil && len(former) > 0 {
		t.Fatalf("former IDs %v without a known membership", former)
	}
	for id, cd := range d.Clusters {
		for _, h := range cd.Held {
			if h.Source == "old" && h.Outside != (obs.Members != nil && former["old"] == "") {
				t.Fatalf("%s: held %+v, former IDs %v", id, h, former)
			}
		}
		for _, sl := range cd.EndpointSlices {
			if sl.Labels[mcsv1beta1.LabelSourceCluster] == "old" {
				t.Fatalf("%s: a copy under the former ID: %s", id, sl.Name)
			}
		}
	}
}

// lastService is c's Service ns/name, if genObserved made one.
func lastService(c ObservedCluster, ns, name string) *corev1.Service {
	for _, s := range c.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

// slicePorts are the ports the EndpointSlice controller gives svc's slices: each port's name and
// protocol, with the target port's number.
func slicePorts(svc *corev1.Service) []discoveryv1.EndpointPort {
	var out []discoveryv1.EndpointPort
	for _, p := range svc.Spec.Ports {
		proto := normProtocol(p.Protocol)
		out = append(out, discoveryv1.EndpointPort{Name: ptr(p.Name), Protocol: &proto, Port: ptr(p.Port + 8000), AppProtocol: p.AppProtocol})
	}
	return out
}

func shuffled(obs Observed, seed uint64) Observed {
	r := rand.New(rand.NewPCG(seed, 7))
	o := cloneObs(obs)
	r.Shuffle(len(o.Clusters), func(i, j int) { o.Clusters[i], o.Clusters[j] = o.Clusters[j], o.Clusters[i] })
	for i := range o.Clusters {
		c := &o.Clusters[i]
		r.Shuffle(len(c.Namespaces), func(i, j int) { c.Namespaces[i], c.Namespaces[j] = c.Namespaces[j], c.Namespaces[i] })
		r.Shuffle(len(c.ServiceExports), func(i, j int) {
			c.ServiceExports[i], c.ServiceExports[j] = c.ServiceExports[j], c.ServiceExports[i]
		})
		r.Shuffle(len(c.Services), func(i, j int) { c.Services[i], c.Services[j] = c.Services[j], c.Services[i] })
		r.Shuffle(len(c.EndpointSlices), func(i, j int) {
			c.EndpointSlices[i], c.EndpointSlices[j] = c.EndpointSlices[j], c.EndpointSlices[i]
		})
		r.Shuffle(len(c.ServiceImports), func(i, j int) {
			c.ServiceImports[i], c.ServiceImports[j] = c.ServiceImports[j], c.ServiceImports[i]
		})
	}
	return o
}

func FuzzCompute(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 1, 0, 7, 0, 0, 1, 2, 3, 0, 1, 0, 7, 1, 1, 1, 1, 3})
	f.Add([]byte{3, 1, 1, 7, 1, 1, 0, 0, 0, 0, 2, 4, 3, 1, 1, 1, 15, 0, 0, 1, 5, 6, 1, 7, 2, 3, 3, 1, 2, 3, 4, 63, 9, 9})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over"))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255})
	// A service whose copies are hinted with their endpoints' zones, and one whose endpoint lacks
	// a zone.
	f.Add([]byte{0x2, 0x47, 0xdf, 0x47, 0x26, 0x4c, 0x8b, 0xc8, 0x24, 0x62, 0x4, 0xc1, 0x71, 0x73, 0x41, 0x50, 0xe0, 0x19, 0xff, 0x7c, 0x28, 0x74, 0xef, 0xc0, 0x46, 0xad, 0xaa, 0x17, 0x83, 0x3e, 0x63, 0x44, 0xe9, 0xd4, 0x18, 0x9f})
	f.Fuzz(func(t *testing.T, b []byte) {
		obs := genObserved(b)
		d := Compute(obs)
		acts := Plan(obs, d)

		// Order independence.
		for seed := uint64(1); seed <= 2; seed++ {
			sh := shuffled(obs, seed+uint64(len(b)))
			if d2 := Compute(sh); !reflect.DeepEqual(d, d2) {
				t.Fatalf("Compute depends on input order")
			}
			if a2 := Plan(sh, Compute(sh)); !reflect.DeepEqual(summary(acts), summary(a2)) {
				t.Fatalf("Plan depends on input order:\n%q\n%q", summary(acts), summary(a2))
			}
		}

		// sync's caches hold its copies as a digest (member.Trim): the same decisions from them.
		if d2 := Compute(digestCopies(obs)); !reflect.DeepEqual(d, d2) {
			t.Fatalf("Compute differs when the copies are digests")
		}
		if a2 := Plan(digestCopies(obs), d); !reflect.DeepEqual(summary(acts), summary(a2)) {
			t.Fatalf("Plan differs when the copies are digests:\n%q\n%q", summary(acts), summary(a2))
		}

		checkConflicts(t, obs, d)
		checkDesiredHints(t, obs, d)
		checkFormer(t, obs, d)
		checkValid(t, d)
		checkFor(t, obs, d, acts)

		for id, cd := range d.Clusters {
			for _, si := range cd.ServiceImports {
				seenName, seenPP := map[string]bool{}, map[string]bool{}
				for _, p := range si.Spec.Ports {
					pp := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
					if seenName[p.Name] || seenPP[pp] {
						t.Fatalf("%s: import %s/%s has duplicate port %+v in %+v", id, si.Namespace, si.Name, p, si.Spec.Ports)
					}
					seenName[p.Name], seenPP[pp] = true, true
				}
			}
			for _, sl := range cd.EndpointSlices {
				if len(sl.Name) > 63 || sl.Labels[mcsv1beta1.LabelSourceCluster] == "zz" {
					t.Fatalf("%s: bad slice %s (a managed slice was used as a source?)", id, sl.Name)
				}
			}
		}

		checkPlanSafety(t, obs, acts)
		if len(obs.Clusters) > 1 {
			checkUnreadKept(t, obs)
		}

		// Idempotence: the apiserver model converges and then Plan stays empty.
		conv := cloneObs(obs)
		if n, left := converge(&conv, 6); len(left) != 0 {
			t.Fatalf("no convergence after %d passes, still: %q", n, summary(left))
		}
		checkValid(t, Compute(conv)) // with owner references and the IPs the apiserver gave
		if left := Plan(digestCopies(conv), Compute(conv)); len(left) != 0 {
			t.Fatalf("converged, but with the copies as digests still: %q", summary(left))
		}
	})
}

// checkFor: deciding for one cluster alone (Observed.For, a cluster's pipeline) wants and plans
// there what deciding for all does, and nothing elsewhere.
func checkFor(t *testing.T, obs Observed, d Desired, acts []Action) {
	for _, c := range obs.Clusters {
		one := obs
		one.For = c.ID
		dFor := Compute(one)
		if len(dFor.Clusters) > 1 || !reflect.DeepEqual(dFor.Clusters[c.ID], d.Clusters[c.ID]) {
			t.Fatalf("%s: deciding for it alone wants %d clusters, or other than deciding for all", c.ID, len(dFor.Clusters))
		}
		if !reflect.DeepEqual(dFor.Conflicts, d.Conflicts) {
			t.Fatalf("%s: deciding for it alone finds other conflicts: %v, not %v", c.ID, dFor.Conflicts, d.Conflicts)
		}
		var want []Action
		for _, a := range acts {
			if a.Cluster == c.ID {
				want = append(want, a)
			}
		}
		if got := Plan(one, dFor); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: deciding for it alone plans\n%q\nnot\n%q", c.ID, summary(got), summary(want))
		}
		// What a sync --local caches of the other members (member.Config.Local).
		narrow := readElsewhere(one)
		dNarrow := Compute(narrow)
		if !reflect.DeepEqual(dNarrow, dFor) {
			t.Fatalf("%s: deciding for it without the others' managed objects and nodes wants other than with them", c.ID)
		}
		if got := Plan(narrow, dNarrow); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: deciding for it without the others' managed objects and nodes plans\n%q\nnot\n%q", c.ID, summary(got), summary(want))
		}
	}
}

// readElsewhere is obs as a sync --local for obs.For reads it: in every other cluster, no Nodes
// and only the Services and EndpointSlices names.NotManagedSelector selects.
func readElsewhere(obs Observed) Observed {
	sel, err := labels.Parse(names.NotManagedSelector)
	if err != nil {
		panic(err)
	}
	out := obs
	out.Clusters = slices.Clone(obs.Clusters)
	for i := range out.Clusters {
		c := &out.Clusters[i]
		if c.ID == obs.For {
			continue
		}
		c.Topology = nil
		c.Services = slices.DeleteFunc(slices.Clone(c.Services), func(s *corev1.Service) bool { return !sel.Matches(labels.Set(s.Labels)) })
		c.EndpointSlices = slices.DeleteFunc(slices.Clone(c.EndpointSlices), func(s *discoveryv1.EndpointSlice) bool { return !sel.Matches(labels.Set(s.Labels)) })
	}
	return out
}

// checkConflicts recomputes the winner independently and checks every conflict against the
// Conflict condition of every constituent export.
func checkConflicts(t *testing.T, obs Observed, d Desired) {
	type k struct{ ns, name string }
	oldest := map[k]string{}
	oldestTime := map[k]metav1.Time{}
	constituents := map[k][]string{}
	for _, c := range obs.Clusters {
		for _, e := range c.ServiceExports {
			var svc *corev1.Service
			for _, s := range c.Services {
				if s.Namespace == e.Namespace && s.Name == e.Name {
					svc = s
				}
			}
			if svc == nil || names.IsManaged(svc.Labels) || svc.Spec.Type == corev1.ServiceTypeExternalName {
				continue
			}
			key := k{e.Namespace, e.Name}
			constituents[key] = append(constituents[key], c.ID)
			w, ok := oldest[key]
			wt := oldestTime[key]
			if !ok || e.CreationTimestamp.Before(&wt) || (e.CreationTimestamp.Equal(&wt) && c.ID < w) {
				oldest[key], oldestTime[key] = c.ID, e.CreationTimestamp
			}
		}
	}
	reasons := map[k][]string{}
	for _, c := range d.Conflicts {
		key := k{c.Namespace, c.Service}
		if c.Winner != oldest[key] {
			t.Fatalf("conflict %+v: winner %q, oldest export is in %q", c, c.Winner, oldest[key])
		}
		if c.Total != len(constituents[key]) || len(c.Disagreeing) == 0 || len(c.Disagreeing) >= c.Total {
			t.Fatalf("conflict %+v: bad counts, constituents %v", c, constituents[key])
		}
		for i, dis := range c.Disagreeing {
			if dis == c.Winner {
				t.Fatalf("conflict %+v: winner disagrees with itself", c)
			}
			if len(c.Losing) != len(c.Disagreeing) || c.Losing[i].Cluster != dis {
				t.Fatalf("conflict %+v: what each disagreeing export lost is not said", c)
			}
		}
		if len(c.Message) > maxConflictMessage {
			t.Fatalf("conflict %+v: message of %d bytes", c, len(c.Message))
		}
		reasons[key] = append(reasons[key], c.Reason)
	}
	for key, cs := range constituents {
		for _, id := range cs {
			cd := d.Clusters[id]
			if cd == nil {
				continue
			}
			cond := findCond(cd.ExportConditions[nn(key.ns, key.name)], mcsv1beta1.ServiceExportConditionConflict)
			if cond == nil {
				t.Fatalf("%s: export %v has no Conflict condition", id, key)
			}
			if len(reasons[key]) == 0 {
				if cond.Status != metav1.ConditionFalse {
					t.Fatalf("%s: %v Conflict=%s without conflicts", id, key, cond.Status)
				}
				continue
			}
			got := strings.Split(cond.Reason, ",")
			if cond.Status != metav1.ConditionTrue || !reflect.DeepEqual(got, reasons[key]) {
				t.Fatalf("%s: %v condition %s/%q, conflicts %v", id, key, cond.Status, cond.Reason, reasons[key])
			}
		}
	}
}

// checkUnreadKept: with the first cluster left unread, nothing that records it as a source is
// deleted, and no import stops listing it.
func checkUnreadKept(t *testing.T, full Observed) {
	obs := cloneObs(full)
	gone := obs.Clusters[0].ID
	obs.Clusters = obs.Clusters[1:]
	byID := map[string]ObservedCluster{}
	for _, c := range obs.Clusters {
		byID[c.ID] = c
	}
	for _, a := range Plan(obs, Compute(obs)) {
		c := byID[a.Cluster]
		switch a.Kind {
		case snapshot.KindEndpointSlice:
			for _, o := range c.EndpointSlices {
				if o.Name == a.Name && o.Namespace == a.Namespace && a.Verb == VerbDelete &&
					names.IsManaged(o.Labels) && o.Labels[mcsv1beta1.LabelSourceCluster] == gone {
					t.Fatalf("%s unread: its slice deleted: %+v", gone, a)
				}
			}
		case snapshot.KindServiceImport:
			for _, o := range c.ServiceImports {
				if o.Name != a.Name || o.Namespace != a.Namespace || !names.IsManaged(o.Labels) {
					continue
				}
				listed := false
				for _, cl := range o.Status.Clusters {
					listed = listed || cl.Cluster == gone
				}
				if !listed {
					continue
				}
				if a.Verb == VerbDelete {
					t.Fatalf("%s unread: an import that lists it deleted: %+v", gone, a)
				}
				if a.Verb == VerbStatus || a.Verb == VerbCreate {
					still := false
					for _, cl := range a.Object.(*mcsv1beta1.ServiceImport).Status.Clusters {
						still = still || cl.Cluster == gone
					}
					if !still {
						t.Fatalf("%s unread: dropped from the import's clusters: %+v", gone, a)
					}
				}
			}
		}
	}
}

// checkPlanSafety: never an action on an unmanaged object or an unreachable cluster.
func checkPlanSafety(t *testing.T, obs Observed, acts []Action) {
	byID := map[string]ObservedCluster{}
	for _, c := range obs.Clusters {
		byID[c.ID] = c
	}
	for i, a := range acts {
		c := byID[a.Cluster]
		if !c.Reachable {
			t.Fatalf("action in unreachable cluster: %+v", a)
		}
		var labels map[string]string
		found := false
		switch a.Kind {
		case snapshot.KindServiceImport:
			for _, o := range c.ServiceImports {
				if o.Namespace == a.Namespace && o.Name == a.Name {
					labels, found = o.Labels, true
				}
			}
		case snapshot.KindService:
			for _, o := range c.Services {
				if o.Namespace == a.Namespace && o.Name == a.Name {
					labels, found = o.Labels, true
				}
			}
		case snapshot.KindEndpointSlice:
			for _, o := range c.EndpointSlices {
				if o.Namespace == a.Namespace && o.Name == a.Name {
					labels, found = o.Labels, true
				}
			}
		case snapshot.KindServiceExport:
			continue
		}
		if a.Verb == VerbCreate && found && !(i > 0 && acts[i-1].Verb == VerbDelete && acts[i-1].Name == a.Name && acts[i-1].Kind == a.Kind) {
			t.Fatalf("create of an existing object: %+v", a)
		}
		if found && !names.IsManaged(labels) {
			t.Fatalf("action on an unmanaged object: %+v", a)
		}
	}
}

// digestCopies is obs with our copies as sync's caches hold them.
func digestCopies(obs Observed) Observed {
	out := cloneObs(obs)
	for _, c := range out.Clusters {
		for _, s := range c.EndpointSlices {
			if names.IsManaged(s.Labels) {
				snapshot.ToDigest(s)
			}
		}
	}
	return out
}
