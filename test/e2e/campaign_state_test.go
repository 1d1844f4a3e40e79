// No build tag: the final-state checker of the fault campaign (campaign_test.go) is pure, and its
// own test runs with the unit tests too, so a checker that accepts anything fails `make test-unit`.

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// The labels sync puts on what it writes (spelled out here: the test must not share the code under
// test's constants).
const (
	lblManagedBy      = "app.kubernetes.io/managed-by"
	lblSliceManagedBy = "endpointslice.kubernetes.io/managed-by"
	lblMCSService     = "multicluster.kubernetes.io/service-name"
	lblSourceCluster  = "multicluster.kubernetes.io/source-cluster"
	lblKubeService    = "kubernetes.io/service-name"
	annDerived        = "multicluster.kubernetes.io/derived-service"
	managedValue      = "kubectl-mcs"
)

// memberObjects is what one member holds in the campaign's namespace: every ServiceImport,
// ServiceExport, Service and EndpointSlice.
type memberObjects struct {
	Imports  []mcsv1beta1.ServiceImport
	Exports  []mcsv1beta1.ServiceExport
	Services []corev1.Service
	Slices   []discoveryv1.EndpointSlice
}

// wantService is one service as the campaign left it: the ports of its Services (identical in
// every member that has one) and, per member holding a ServiceExport, whether a Service backs it.
type wantService struct {
	Name       string
	Port       int32
	TargetPort int32
	// Exports maps each member with a ServiceExport to its source; nil means the export has no
	// Service (Valid=False/NoService, not part of the service).
	Exports map[string]*wantSource
}

// wantSource is one exporting member: the ready pod IPs behind its Service and how many
// EndpointSlices its own EndpointSlice controller keeps for it.
type wantSource struct {
	IPs    []string
	Slices int
}

func (s wantService) exporters() []string {
	var out []string
	for m, src := range s.Exports {
		if src != nil {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// expectedLines is the final state as one line per fact, in every member of importers (the
// members that have the namespace): an import, a derived Service and, per exporting member, the
// copies of its slices for every service that some member validly exports; the conditions of
// every ServiceExport.
func expectedLines(importers []string, svcs []wantService) []string {
	var out []string
	for _, m := range importers {
		for _, s := range svcs {
			for _, em := range sortedKeys(s.Exports) {
				if s.Exports[em] == nil {
					if em == m {
						out = append(out, fmt.Sprintf("%s ServiceExport %s conditions=[Valid=False/NoService]", m, s.Name))
					}
					continue
				}
				if em == m {
					out = append(out, fmt.Sprintf("%s ServiceExport %s conditions=[Conflict=False/NoConflicts Ready=True/Exported Valid=True/Valid]", m, s.Name))
				}
			}
			exp := s.exporters()
			if len(exp) == 0 {
				continue
			}
			ports := fmt.Sprintf("[TCP/%d]", s.Port)
			out = append(out,
				fmt.Sprintf("%s ServiceImport %s managed type=ClusterSetIP ports=%s clusters=%v ips=derived-%s derived=derived-%s", m, s.Name, ports, exp, s.Name, s.Name),
				fmt.Sprintf("%s Service derived-%s managed type=ClusterIP ports=[TCP/%d->%d] owner=ServiceImport/%s", m, s.Name, s.Port, s.Port, s.Name))
			for _, em := range exp {
				src := s.Exports[em]
				ips := append([]string{}, src.IPs...)
				sort.Strings(ips)
				out = append(out, fmt.Sprintf("%s EndpointSlices %s from=%s count=%d service=[derived-%s] ports=[TCP/%d] owner=ok addresses=%v",
					m, s.Name, em, src.Slices, s.Name, s.TargetPort, ips))
			}
		}
	}
	sort.Strings(out)
	return out
}

// observedLines renders what a member holds in the same form as expectedLines: every
// ServiceImport and ServiceExport, every Service that is managed or carries the derived prefix,
// and the managed EndpointSlices grouped by service and source cluster.
func observedLines(m string, o memberObjects) []string {
	var out []string
	services := map[string]corev1.Service{}
	for _, s := range o.Services {
		services[s.Name] = s
	}
	imports := map[string]mcsv1beta1.ServiceImport{}
	for _, si := range o.Imports {
		imports[si.Name] = si
	}

	for _, se := range o.Exports {
		var conds []string
		for _, c := range se.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
		}
		sort.Strings(conds)
		out = append(out, fmt.Sprintf("%s ServiceExport %s conditions=[%s]", m, se.Name, strings.Join(conds, " ")))
	}

	for _, si := range o.Imports {
		var ports []string
		for _, p := range si.Spec.Ports {
			ports = append(ports, portString(p.Name, p.Protocol, p.Port))
		}
		clusters := []string{}
		for _, c := range si.Status.Clusters {
			clusters = append(clusters, c.Cluster)
		}
		sort.Strings(clusters)
		derived := si.Annotations[annDerived]
		// spec.ips must be the derived Service's cluster IPs: rendered as that Service's name when
		// they are, as the addresses themselves when not.
		ips := fmt.Sprint(si.Spec.IPs)
		if d, ok := services[derived]; ok && len(si.Spec.IPs) > 0 && strings.Join(si.Spec.IPs, ",") == strings.Join(clusterIPsOf(d), ",") {
			ips = derived
		}
		out = append(out, fmt.Sprintf("%s ServiceImport %s %s type=%s ports=[%s] clusters=%v ips=%s derived=%s",
			m, si.Name, managed(si.Labels[lblManagedBy]), si.Spec.Type, strings.Join(ports, " "), clusters, ips, derived))
	}

	for _, s := range o.Services {
		if s.Labels[lblManagedBy] != managedValue && !strings.HasPrefix(s.Name, "derived-") {
			continue // the user's own
		}
		typ := "ClusterIP"
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			typ = "Headless"
		}
		var ports []string
		for _, p := range s.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%s->%s", portString(p.Name, p.Protocol, p.Port), p.TargetPort.String()))
		}
		var owners []string
		for _, r := range s.OwnerReferences {
			o := r.Kind + "/" + r.Name
			if si, ok := imports[r.Name]; !ok || r.Kind != "ServiceImport" || si.UID != r.UID {
				o += "(stale)"
			}
			owners = append(owners, o)
		}
		out = append(out, fmt.Sprintf("%s Service %s %s type=%s ports=[%s] owner=%s",
			m, s.Name, managed(s.Labels[lblManagedBy]), typ, strings.Join(ports, " "), strings.Join(owners, ",")))
	}

	type group struct {
		count             int
		kubeSvc, ports    map[string]bool
		addresses, owners []string
	}
	groups := map[[2]string]*group{}
	for _, sl := range o.Slices {
		if sl.Labels[lblSliceManagedBy] != managedValue {
			continue // the members' own EndpointSlice controllers'
		}
		k := [2]string{sl.Labels[lblMCSService], sl.Labels[lblSourceCluster]}
		g := groups[k]
		if g == nil {
			g = &group{kubeSvc: map[string]bool{}, ports: map[string]bool{}}
			groups[k] = g
		}
		g.count++
		g.kubeSvc[sl.Labels[lblKubeService]] = true
		for _, p := range sl.Ports {
			var name string
			var proto corev1.Protocol
			var port int32
			if p.Name != nil {
				name = *p.Name
			}
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			if p.Port != nil {
				port = *p.Port
			}
			g.ports[portString(name, proto, port)] = true
		}
		for _, e := range sl.Endpoints {
			for _, a := range e.Addresses {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready {
					a += "(not ready)"
				}
				g.addresses = append(g.addresses, a)
			}
		}
		// Copies may be owned by the derived Service they feed, and by nothing else.
		for _, r := range sl.OwnerReferences {
			if d, ok := services[sl.Labels[lblKubeService]]; !ok || r.Kind != "Service" || r.Name != d.Name || r.UID != d.UID {
				g.owners = append(g.owners, r.Kind+"/"+r.Name+"(stale)")
			}
		}
	}
	for k, g := range groups {
		sort.Strings(g.addresses)
		owner := "ok"
		if len(g.owners) > 0 {
			owner = strings.Join(g.owners, ",")
		}
		out = append(out, fmt.Sprintf("%s EndpointSlices %s from=%s count=%d service=%v ports=%v owner=%s addresses=%v",
			m, k[0], k[1], g.count, sortedKeys(g.kubeSvc), sortedKeys(g.ports), owner, g.addresses))
	}
	sort.Strings(out)
	return out
}

// diffLines is what is missing from got ("- ") and what is extra in it ("+ "), or nothing.
func diffLines(want, got []string) []string {
	w, g := map[string]int{}, map[string]int{}
	for _, l := range want {
		w[l]++
	}
	for _, l := range got {
		g[l]++
	}
	var out []string
	for _, l := range want {
		if g[l] < w[l] {
			out = append(out, "- "+l)
			g[l]++
		}
	}
	w2 := map[string]int{}
	for _, l := range want {
		w2[l]++
	}
	for _, l := range got {
		if w2[l] > 0 {
			w2[l]--
			continue
		}
		out = append(out, "+ "+l)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return out
}

func portString(name string, proto corev1.Protocol, port int32) string {
	s := fmt.Sprintf("%s/%d", proto, port)
	if name != "" {
		s = name + "=" + s
	}
	return s
}

func clusterIPsOf(s corev1.Service) []string {
	if len(s.Spec.ClusterIPs) > 0 {
		return s.Spec.ClusterIPs
	}
	if s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone {
		return []string{s.Spec.ClusterIP}
	}
	return nil
}

func managed(v string) string {
	if v == managedValue {
		return "managed"
	}
	return "unmanaged"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// objectsFor builds what a correct controller leaves in member m for svcs: the checker's own test
// starts from it and breaks one thing at a time. uid gives every object a distinct UID.
func objectsFor(m string, svcs []wantService, withExports bool) memberObjects {
	var o memberObjects
	n := 0
	uid := func() string { n++; return fmt.Sprintf("uid-%s-%d", m, n) }
	for _, s := range svcs {
		if src, ok := s.Exports[m]; ok && withExports {
			se := mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}
			if src == nil {
				se.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "False", Reason: "NoService"}}
			} else {
				se.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "True", Reason: "Valid"},
					{Type: "Ready", Status: "True", Reason: "Exported"}, {Type: "Conflict", Status: "False", Reason: "NoConflicts"}}
			}
			o.Exports = append(o.Exports, se)
		}
		exp := s.exporters()
		if len(exp) == 0 {
			continue
		}
		derived := "derived-" + s.Name
		si := mcsv1beta1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Name: s.Name, UID: types.UID(uid()), Labels: map[string]string{lblManagedBy: managedValue},
				Annotations: map[string]string{annDerived: derived}},
			Spec: mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, IPs: []string{"10.96.0.10"},
				Ports: []mcsv1beta1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: s.Port}}},
		}
		for _, c := range exp {
			si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
		o.Imports = append(o.Imports, si)
		svc := corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: derived, UID: types.UID(uid()), Labels: map[string]string{lblManagedBy: managedValue},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ServiceImport", Name: s.Name, UID: si.UID}}},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: s.Port, TargetPort: intstr.FromInt32(s.Port)}}},
		}
		o.Services = append(o.Services, svc)
		for _, c := range exp {
			src := s.Exports[c]
			per := (len(src.IPs) + src.Slices - 1) / max(src.Slices, 1)
			for i := 0; i < src.Slices; i++ {
				proto, port := corev1.ProtocolTCP, s.TargetPort
				sl := discoveryv1.EndpointSlice{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", s.Name, c, i), UID: types.UID(uid()),
						Labels:          map[string]string{lblSliceManagedBy: managedValue, lblMCSService: s.Name, lblSourceCluster: c, lblKubeService: derived},
						OwnerReferences: []metav1.OwnerReference{{Kind: "Service", Name: derived, UID: svc.UID}}},
					Ports: []discoveryv1.EndpointPort{{Protocol: &proto, Port: &port}},
				}
				for j := i * per; j < min((i+1)*per, len(src.IPs)); j++ {
					sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{src.IPs[j]}})
				}
				o.Slices = append(o.Slices, sl)
			}
		}
	}
	return o
}

// TestCampaignChecker: the checker accepts exactly what a correct controller leaves, and reports
// each kind of damage a faulty one could leave behind.
func TestCampaignChecker(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	svcs := []wantService{
		{Name: "stable-a", Port: 80, TargetPort: 8080, Exports: map[string]*wantSource{
			"member1": {IPs: []string{"10.11.0.4", "10.11.0.5"}, Slices: 1},
			"member2": {IPs: []string{"10.12.0.7"}, Slices: 1}}},
		{Name: "churn-0", Port: 81, TargetPort: 8081, Exports: map[string]*wantSource{
			"member3": {IPs: []string{"10.13.0.2", "10.13.0.3", "10.13.0.9"}, Slices: 2},
			"member1": nil}},
		{Name: "churn-1", Port: 80, TargetPort: 8080, Exports: map[string]*wantSource{"member2": nil}},
	}
	observe := func(mutate func(m string, o *memberObjects)) []string {
		var got []string
		for _, m := range members {
			o := objectsFor(m, svcs, true)
			if mutate != nil {
				mutate(m, &o)
			}
			got = append(got, observedLines(m, o)...)
		}
		return got
	}
	want := expectedLines(members, svcs)
	if d := diffLines(want, observe(nil)); len(d) > 0 {
		t.Fatalf("a correct final state is reported as wrong:\n%s", strings.Join(d, "\n"))
	}
	// Per member 2 imports, 2 derived Services, 3 slice groups; 5 exports in all.
	if len(want) != 3*7+5 {
		t.Errorf("expected %d lines, got %d:\n%s", 3*7+5, len(want), strings.Join(want, "\n"))
	}
	slice := func(o *memberObjects, svc, src string) *discoveryv1.EndpointSlice {
		for i := range o.Slices {
			if o.Slices[i].Labels[lblMCSService] == svc && o.Slices[i].Labels[lblSourceCluster] == src {
				return &o.Slices[i]
			}
		}
		t.Fatalf("no slice %s from %s", svc, src)
		return nil
	}
	bad := map[string]func(m string, o *memberObjects){
		"a source's slices missing (an exporter taken as not exporting)": func(m string, o *memberObjects) {
			if m == "member3" {
				s := slice(o, "stable-a", "member2")
				s.Labels[lblSliceManagedBy] = "someone-else"
			}
		},
		"status.clusters without an exporter": func(m string, o *memberObjects) {
			if m == "member1" {
				o.Imports[0].Status.Clusters = o.Imports[0].Status.Clusters[:1]
			}
		},
		"a stale address": func(m string, o *memberObjects) {
			if m == "member2" {
				s := slice(o, "churn-0", "member3")
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.13.0.77"}})
			}
		},
		"a not-ready endpoint": func(m string, o *memberObjects) {
			if m == "member2" {
				f := false
				slice(o, "churn-0", "member3").Endpoints[0].Conditions.Ready = &f
			}
		},
		"a duplicate copy of a slice": func(m string, o *memberObjects) {
			if m == "member1" {
				d := slice(o, "stable-a", "member1").DeepCopy()
				d.Name += "-dup"
				d.Endpoints = nil
				o.Slices = append(o.Slices, *d)
			}
		},
		"a leftover slice of a service nobody exports": func(m string, o *memberObjects) {
			if m == "member2" {
				d := slice(o, "stable-a", "member1").DeepCopy()
				d.Labels[lblMCSService], d.Labels[lblKubeService] = "churn-1", "derived-churn-1"
				o.Slices = append(o.Slices, *d)
			}
		},
		"a leftover import of a service nobody exports": func(m string, o *memberObjects) {
			d := o.Imports[0].DeepCopy()
			d.Name = "churn-1"
			o.Imports = append(o.Imports, *d)
		},
		"an import taken over from its user (no managed-by label)": func(m string, o *memberObjects) {
			delete(o.Imports[1].Labels, lblManagedBy)
		},
		"import IPs that are not the derived Service's": func(m string, o *memberObjects) {
			o.Imports[0].Spec.IPs = []string{"10.96.3.3"}
		},
		"an old port on the import": func(m string, o *memberObjects) {
			if m == "member3" {
				o.Imports[1].Spec.Ports[0].Port = 80
			}
		},
		"an old port on the derived Service": func(m string, o *memberObjects) {
			if m == "member3" {
				o.Services[1].Spec.Ports[0].Port = 80
			}
		},
		"a derived Service owned by an import that is gone": func(m string, o *memberObjects) {
			o.Services[0].OwnerReferences[0].UID = "gone"
		},
		"a slice owned by a derived Service that is gone": func(m string, o *memberObjects) {
			o.Slices[0].OwnerReferences[0].UID = "gone"
		},
		"a slice feeding the wrong Service": func(m string, o *memberObjects) {
			o.Slices[0].Labels[lblKubeService] = "stable-a"
		},
		"old target port in a slice": func(m string, o *memberObjects) {
			p := int32(8080)
			slice(o, "churn-0", "member3").Ports[0].Port = &p
		},
		"a conflict on an export": func(m string, o *memberObjects) {
			if m == "member2" {
				o.Exports[0].Status.Conditions[2] = metav1.Condition{Type: "Conflict", Status: "True", Reason: "PortConflict"}
			}
		},
		"Ready and Conflict left on an invalid export": func(m string, o *memberObjects) {
			if m == "member1" {
				o.Exports[1].Status.Conditions = append(o.Exports[1].Status.Conditions, metav1.Condition{Type: "Ready", Status: "True", Reason: "Exported"})
			}
		},
		"no conditions on an export": func(m string, o *memberObjects) {
			if m == "member2" {
				o.Exports[1].Status.Conditions = nil
			}
		},
	}
	for name, mutate := range bad {
		if d := diffLines(want, observe(mutate)); len(d) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
	// And a wrong expectation against a correct state: member3 taken as not exporting churn-0.
	wrong := append([]wantService{}, svcs...)
	wrong[1] = wantService{Name: "churn-0", Port: 81, TargetPort: 8081, Exports: map[string]*wantSource{"member1": nil}}
	if d := diffLines(expectedLines(members, wrong), observe(nil)); len(d) == 0 {
		t.Error("a wrong expectation matched")
	}
}
