// No build tag: the final-state checker of the fault campaign (campaign_test.go) is pure, and its
// own test runs with the unit tests too, so a checker that accepts anything fails `make test-unit`.

package e2e

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
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
