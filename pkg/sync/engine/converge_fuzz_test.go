package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// foreignChange is another field manager's write to what sync wrote (or to an export), made
// before the round of that number decides.
type foreignChange struct {
	round, cluster, op int
	name               string
}

// The foreign changes, by op.
const (
	foreignSelector      = iota // a selector on derived-NAME (server-side apply)
	foreignPort                 // a port of its own on derived-NAME
	foreignPolicies             // trafficDistribution and internalTrafficPolicy on derived-NAME
	foreignImportMeta           // a label and an annotation on the ServiceImport
	foreignLastApplied          // kubectl's client-side apply record on derived-NAME and the import
	foreignExportAnnotes        // the export starts exporting kubectl's record
	foreignHints                // zone hints of its own on a copy
	foreignOps
)

var exportedAnnotationPool = []map[string]string{nil, {"note": "x"}, {snapshot.LastAppliedAnnotation: `{"kind":"Service"}`},
	{snapshot.LastAppliedAnnotation: `{}`, "note": "x"}}

// genClusterset builds members from fuzz bytes: IPv4 or dual-stack clusters, source Services of
// the families they serve, their slices as the EndpointSlice controller writes them, exports
// with exported labels and annotations (kubectl's record among them), each written by the
// manager that writes it in a real cluster; and the foreign changes to come.
func genClusterset(b []byte) ([]*fakeServer, []foreignChange) {
	s := &byteSrc{b: b}
	var foreign []foreignChange
	for range s.pick(4) {
		foreign = append(foreign, foreignChange{round: 2 + s.pick(3), cluster: s.next(), op: s.pick(foreignOps), name: []string{"s1", "s2"}[s.pick(2)]})
	}
	var servers []*fakeServer
	for ci := range 1 + s.pick(3) {
		nss := []string{"ns1"}
		if s.pick(2) == 0 {
			nss = append(nss, "ns2")
		}
		srv := newFakeServer(string(rune('a'+ci)), s.pick(2) == 0, nss)
		srv.topology = fuzzTopology(ci)
		for _, ns := range nss {
			for _, name := range []string{"s1", "s2"} {
				genService(s, srv, ci, ns, name)
			}
		}
		servers = append(servers, srv)
	}
	for i := range foreign {
		foreign[i].cluster %= len(servers)
	}
	return servers, foreign
}

func genService(s *byteSrc, srv *fakeServer, ci int, ns, name string) {
	flags := s.next()
	var svc *corev1.Service
	if flags&2 != 0 {
		var ports []corev1.ServicePort
		for n := 1 + s.pick(3); n > 0; n-- {
			p := fuzzPorts[s.pick(len(fuzzPorts))]
			if !slices.ContainsFunc(ports, func(q corev1.ServicePort) bool {
				return q.Name == p.Name || (q.Port == p.Port && normProtocol(q.Protocol) == normProtocol(p.Protocol))
			}) {
				ports = append(ports, p)
			}
		}
		if len(ports) > 1 && slices.ContainsFunc(ports, func(q corev1.ServicePort) bool { return q.Name == "" }) {
			ports = ports[:1] // the apiserver refuses an unnamed port among several
		}
		svc = mkService(ns, name, ports...)
		svc.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
		if s.pick(4) == 0 {
			svc.Spec.ClusterIP = corev1.ClusterIPNone
		}
		if s.pick(4) == 0 {
			svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}
		svc.Spec.TrafficDistribution = []*string{nil, nil, ptr("PreferClose"), nil, ptr("PreferSameZone"), ptr("PreferSameNode")}[s.pick(6)]
		svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		if len(srv.families) == 2 {
			switch s.pick(4) {
			case 1:
				svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
			case 2:
				svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, ptr(corev1.IPFamilyPolicyPreferDualStack)
			case 3:
				svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}, ptr(corev1.IPFamilyPolicyPreferDualStack)
			}
		}
		u := toUnstructured(svc)
		if s.pick(2) == 0 {
			u.SetAnnotations(map[string]string{snapshot.LastAppliedAnnotation: `{"kind":"Service"}`})
		}
		must(srv.create(snapshot.KindService, u, csaManager))
		svc = fromUnstructured[corev1.Service](srv.objs[snapshot.KindService][key{Namespace: ns, Name: name}])
	}
	if flags&4 != 0 && svc != nil {
		for i, f := range svc.Spec.IPFamilies {
			n := 1 + s.pick(250)
			addr := fmt.Sprintf("10.%d.0.%d", ci, n)
			if f == corev1.IPv6Protocol {
				addr = fmt.Sprintf("fd00:%d::%x", ci, n)
			}
			sl := mkSlice(ns, name, fmt.Sprintf("%s-%d", name, i), addr)
			sl.TypeMeta = metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"}
			sl.AddressType = discoveryv1.AddressType(f)
			sl.Ports = slicePorts(svc)
			sl.Endpoints[0].Zone = fuzzZone(n)
			sl.Annotations = map[string]string{snapshot.LastChangeTriggerAnnotation: "2026-01-01T00:00:00Z"}
			must(srv.create(snapshot.KindEndpointSlice, toUnstructured(sl), "endpointslice-controller"))
		}
	}
	if flags&1 != 0 {
		e := mkExport(ns, name, s.pick(3))
		e.TypeMeta = metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: mcsv1beta1.ServiceExportKindName}
		e.Annotations = fuzzChoice(name)
		if s.pick(3) == 0 {
			e.Spec.ExportedLabels = map[string]string{"tier": []string{"web", "db"}[s.pick(2)]}
		}
		e.Spec.ExportedAnnotations = exportedAnnotationPool[s.pick(len(exportedAnnotationPool))]
		u := toUnstructured(e)
		if s.pick(2) == 0 {
			u.SetAnnotations(withChoice(map[string]string{snapshot.LastAppliedAnnotation: `{"kind":"ServiceExport"}`}, name))
		}
		must(srv.create(snapshot.KindServiceExport, u, csaManager))
		stored := srv.objs[snapshot.KindServiceExport][key{Namespace: ns, Name: name}]
		stored.SetCreationTimestamp(e.CreationTimestamp)
		stored.SetGeneration(1)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// foreign makes one foreign change, when what it changes exists.
func (s *fakeServer) foreign(f foreignChange) {
	derived := key{Namespace: "ns1", Name: names.DerivedServiceName(f.name)}
	imp := key{Namespace: "ns1", Name: f.name}
	partial := func(kind, apiVersion string, k key, fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(k.Namespace)
		u.SetName(k.Name)
		return u
	}
	has := func(kind string, k key) bool { return s.objs[kind][k] != nil }
	otherManager := fmt.Sprintf("%s-%d", otherManager, f.op) // one manager per change: an apply drops what the same manager applied before
	var err error
	switch f.op {
	case foreignSelector:
		if has(snapshot.KindService, derived) {
			err = s.apply(snapshot.KindService, partial("Service", "v1", derived, map[string]any{"spec": map[string]any{"selector": map[string]any{"app": "foreign"}}}), otherManager)
		}
	case foreignPort:
		if has(snapshot.KindService, derived) {
			err = s.apply(snapshot.KindService, partial("Service", "v1", derived, map[string]any{"spec": map[string]any{"ports": []any{
				map[string]any{"name": "foreign", "port": int64(9999), "protocol": "TCP"}}}}), otherManager)
		}
	case foreignPolicies:
		if has(snapshot.KindService, derived) {
			err = s.apply(snapshot.KindService, partial("Service", "v1", derived, map[string]any{"spec": map[string]any{
				"trafficDistribution": "PreferClose", "internalTrafficPolicy": "Local"}}), otherManager)
		}
	case foreignImportMeta:
		if has(snapshot.KindServiceImport, imp) {
			u := partial(mcsv1beta1.ServiceImportKindName, mcsv1beta1.GroupVersion.String(), imp, map[string]any{})
			u.SetLabels(map[string]string{"someone.else/label": "x"})
			u.SetAnnotations(map[string]string{"someone.else/note": "y"})
			err = s.apply(snapshot.KindServiceImport, u, otherManager)
		}
	case foreignLastApplied:
		for _, t := range []struct {
			kind string
			k    key
		}{{snapshot.KindService, derived}, {snapshot.KindServiceImport, imp}} {
			if live := s.objs[t.kind][t.k]; live != nil {
				u := live.DeepCopy()
				a := u.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[snapshot.LastAppliedAnnotation] = `{"kind":"` + t.kind + `"}`
				u.SetAnnotations(a)
				if err = s.update(t.kind, u, csaManager); err != nil {
					break
				}
			}
		}
	case foreignExportAnnotes:
		if live := s.objs[snapshot.KindServiceExport][imp]; live != nil {
			u := live.DeepCopy()
			must(unstructured.SetNestedStringMap(u.Object, map[string]string{snapshot.LastAppliedAnnotation: "{}"}, "spec", "exportedAnnotations"))
			u.SetGeneration(u.GetGeneration() + 1)
			err = s.update(snapshot.KindServiceExport, u, csaManager)
		}
	case foreignHints:
		err = s.foreignHints(f.name)
	}
	must(err)
}

// refusalAllowed: the one refusal a converged clusterset keeps is a single-stack export's family
// in a cluster not configured for it (its Ready says so); any other is a plan the apiserver
// refuses for ever.
func refusalAllowed(a Action, err error) bool {
	svc, ok := a.Object.(*corev1.Service)
	return ok && strings.Contains(err.Error(), "not configured on this cluster") &&
		svc.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
}

// convergeSeeds are the fuzzers' seeds: bytes as genClusterset reads them (the foreign changes:
// count, then round, cluster, op, name each; the number of members; then per member ns2 and
// dual-stack, and per service its flags and choices).
var convergeSeeds = [][]byte{
	{},
	{0, 0, 1, 1, 7, 0, 0, 1, 1, 0, 1, 0, 0, 1, 2, 0, 0},                                                 // an export naming kubectl's record
	{0, 1, 1, 0, 7, 0, 0, 1, 1, 0, 3, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0},                               // IPv6-first dual-stack, an IPv4 importer
	{3, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 1, 1, 1, 7, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0}, // a foreign selector, port, policies
	{3, 0, 0, 3, 0, 1, 1, 4, 0, 2, 0, 5, 0, 1, 1, 1, 7, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 7, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0},
	[]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over"),
	{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
	// A service whose copies are hinted with their endpoints' zones, and one whose endpoint lacks
	// a zone.
	{0xd8, 0xfa, 0x79, 0x8c, 0x17, 0xee, 0x50, 0x41, 0x6, 0x74, 0xf4, 0xa5, 0xe2, 0x13, 0xf3, 0xdd, 0x20, 0x9f, 0x97, 0x2a, 0x77, 0xa3, 0x10, 0xd6},
}

func FuzzConverge(f *testing.F) {
	for _, seed := range convergeSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var failing []WriteFailure
		converging(t, b, func(round int, servers []*fakeServer, byID map[string]*fakeServer, history []string) []string {
			obs := observeAll(servers, failing)
			var wrote []string
			wrote, failing = writePlan(t, byID, Plan(obs, Compute(obs)), round, history)
			return wrote
		})
	})
}

// converging runs the rounds of one fuzz input: each makes the foreign changes due, then step,
// which writes and says what it wrote. Nothing may be written convergeRounds after the last
// foreign change, and the clusterset must end as checkConverged wants it. It returns the members
// and what happened, round by round.
func converging(t *testing.T, b []byte, step func(round int, servers []*fakeServer, byID map[string]*fakeServer, history []string) []string) ([]*fakeServer, []string) {
	t.Helper()
	servers, foreign := genClusterset(b)
	byID := map[string]*fakeServer{}
	for _, s := range servers {
		byID[s.id] = s
	}
	last := 0
	for _, c := range foreign {
		last = max(last, c.round)
	}
	var history []string
	for round := 0; round <= last+convergeRounds+3; round++ {
		for _, c := range foreign {
			if c.round == round {
				servers[c.cluster].foreign(c)
				history = append(history, fmt.Sprintf("round %d: foreign change %d to %s in %q", round, c.op, c.name, servers[c.cluster].id))
			}
		}
		wrote := step(round, servers, byID, history)
		history = append(history, fmt.Sprintf("round %d wrote %q", round, wrote))
		if round > last+convergeRounds && len(wrote) > 0 {
			t.Fatalf("still writing %d rounds after the last foreign change:\n%s", round-last, strings.Join(history, "\n"))
		}
	}
	checkConverged(t, servers)
	return servers, history
}

// observeAll is every member as sync's caches hold it, with the writes that keep failing.
func observeAll(servers []*fakeServer, failing []WriteFailure) Observed {
	obs := Observed{Now: now, FieldManager: names.FieldManager, Failing: failing}
	for _, s := range servers {
		obs.Clusters = append(obs.Clusters, s.observe())
	}
	return obs
}

// writePlan makes a plan's writes: what was written, and the refusals a converged clusterset
// keeps (any other fails the test, with history).
func writePlan(t *testing.T, byID map[string]*fakeServer, acts []Action, round int, history []string) (wrote []string, failing []WriteFailure) {
	t.Helper()
	for _, a := range acts {
		if err := byID[a.Cluster].write(a); err != nil {
			if !refusalAllowed(a, err) {
				t.Fatalf("round %d: %s %s %s/%s in %q refused: %v\n%s", round, a.Verb, a.Kind, a.Namespace, a.Name, a.Cluster, err, strings.Join(history, "\n"))
			}
			failing = append(failing, WriteFailure{Service: serviceOf(a), Cluster: a.Cluster, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name, Message: err.Error()})
			continue
		}
		wrote = append(wrote, fmt.Sprintf("%s %s %s %s/%s", a.Cluster, a.Verb, a.Kind, a.Namespace, a.Name))
	}
	return wrote, failing
}

// checkConverged: an export naming an annotation sync cannot keep says so in Valid, and no import
// carries one that sync wrote.
func checkConverged(t *testing.T, servers []*fakeServer) {
	obs := observeAll(servers, nil)
	for _, s := range servers {
		checkHints(t, s, obs)
		for k, u := range s.objs[snapshot.KindServiceExport] {
			e := fromUnstructured[mcsv1beta1.ServiceExport](u)
			valid := findCond(e.Status.Conditions, mcsv1beta1.ServiceExportConditionValid)
			_, named := e.Spec.ExportedAnnotations[snapshot.LastAppliedAnnotation]
			if valid == nil || valid.Status != metav1.ConditionTrue {
				continue
			}
			if named != (valid.Reason == ReasonAnnotationsNotExported && strings.Contains(valid.Message, snapshot.LastAppliedAnnotation)) {
				t.Errorf("%q: export %s names kubectl's record: %v; Valid %s: %s", s.id, k, named, valid.Reason, valid.Message)
			}
		}
		for k, u := range s.objs[snapshot.KindServiceImport] {
			for _, e := range u.GetManagedFields() {
				if e.Manager == names.FieldManager && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), snapshot.LastAppliedAnnotation) {
					t.Errorf("%q: import %s: sync wrote kubectl's record: %s", s.id, k, e.FieldsV1.Raw)
				}
			}
		}
	}
}
