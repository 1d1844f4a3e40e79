package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

const runSyncFix = "Run sync over the clusterset, or check that sync --watch runs and may write here (see the rbac check):"

// checkImports: per service and member, the ServiceImport, its IP, the derived Service and the
// EndpointSlice copies.
func checkImports(s *Snapshot, svcs []service, objs []*objects) []Result {
	members := map[string]int{}
	for i, m := range s.Clusters {
		members[m.ID] = i
	}
	var out []Result
	for _, sv := range svcs {
		exporting := validExporters(sv.item)
		for i, m := range s.Clusters {
			if !readable(m) {
				continue
			}
			cs := sv.item.Clusters[i]
			o := objs[i]
			obj := objectName("serviceimport", sv.key)
			si := o.imports[sv.key]
			r := Result{Check: CheckImport, Cluster: m.ID, Object: obj, Severity: OK}
			switch {
			case !cs.NamespaceExists && len(exporting) > 0:
				r.Severity, r.Message = Warn, fmt.Sprintf("%s/%s is %s", sv.Namespace, sv.Name, engine.NoNamespaceMessage(sv.Namespace, []string{m.ID}))
				r.Fix, r.Commands = "Create the namespace here if this cluster should get the service:", []shell.Command{createNamespaceCommand(m, sv.Namespace)}
				out = append(out, r)
				continue
			case !cs.NamespaceExists:
				continue
			case si == nil && len(exporting) == 0:
				continue
			case si == nil:
				r.Severity, r.Message, r.Fix, r.sync = Fail, fmt.Sprintf("no ServiceImport %s/%s although %s export it", sv.Namespace, sv.Name, quoted(exporting)), runSyncFix, syncPass(sv.Namespace)
				out = append(out, r)
				continue
			case !names.IsManaged(si.Labels):
				r.Severity = Fail
				r.Message = fmt.Sprintf("ServiceImport %s/%s was not created by kubectl-mcs (no %s=%s): sync leaves it alone, so this cluster does not get the service", sv.Namespace, sv.Name, names.ManagedByLabel, names.ManagedByValue)
				r.Fix = fmt.Sprintf("Delete it so that sync imports the service, or stop exporting %s:", sv.Name)
				r.Commands = []shell.Command{deleteImportCommand(m, sv.key)}
				out = append(out, r)
				continue
			case len(exporting) == 0 && len(sv.item.UnreadExporters) > 0:
				r.Severity = Warn
				r.Message = fmt.Sprintf("no cluster of this read exports it; it names %s, outside --contexts: whether it is left over cannot be known here", quoted(sv.item.UnreadExporters))
				r.Fix = "Diagnose with every member of the clusterset in --contexts."
				out = append(out, r)
				continue
			case len(exporting) == 0:
				r.Severity, r.Message = Fail, "left over: no cluster exports it any more"
				r.Fix, r.sync = runSyncFix, syncPass(sv.Namespace)
				out = append(out, r)
				continue
			}
			// Sources outside this read (--contexts) may export it or not: only the rest is judged.
			unread := func(c string) bool { return slices.Contains(sv.item.UnreadExporters, c) }
			got := slices.DeleteFunc(sourcesOf(si), unread)
			outside := slices.DeleteFunc(sourcesOf(si), func(c string) bool { return !unread(c) })
			switch {
			case !sameSet(got, exporting):
				r.Severity, r.Fix, r.sync = Fail, runSyncFix, syncPass(sv.Namespace)
				r.Message = fmt.Sprintf("status.clusters lists %s but %s export it", listOr(sourcesOf(si)), listOr(exporting))
			case len(outside) > 0:
				r.Message = fmt.Sprintf("imports from %s, and from %s, outside --contexts (not checked)", quoted(exporting), quoted(outside))
			default:
				r.Message = "imports from " + quoted(exporting)
			}
			importReadiness(&r, sv, si)
			out = append(out, r)
			derived := si.Annotations[names.DerivedServiceAnnotation]
			if derived == "" {
				derived = names.DerivedServiceName(sv.Name)
			}
			d := o.services[key{Namespace: sv.Namespace, Name: derived}]
			out = append(out, checkDerived(m, sv, derived, d, si))
			out = append(out, checkImportIP(m, sv, si, d))
			out = append(out, checkSlices(s, m, sv, o, exporting, objs, members, derived)...)
			out = append(out, checkFreshness(s, m, sv, cs, exporting)...)
		}
	}
	return out
}

// validExporters are the clusters whose export takes part, unreadable ones included (their last
// known state stands), sorted.
func validExporters(item *status.MultiClusterServiceStatus) []string {
	return append([]string(nil), item.ExportingClusters...)
}

func sourcesOf(si *mcsv1beta1.ServiceImport) []string {
	out := make([]string, 0, len(si.Status.Clusters))
	for _, c := range si.Status.Clusters {
		out = append(out, c.Cluster)
	}
	sort.Strings(out)
	return out
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

func listOr(ss []string) string {
	if len(ss) == 0 {
		return "no cluster"
	}
	return quoted(ss)
}

func checkDerived(m Cluster, sv service, name string, d *corev1.Service, si *mcsv1beta1.ServiceImport) Result {
	r := Result{Check: CheckDerived, Cluster: m.ID, Object: objectName("service", key{Namespace: sv.Namespace, Name: name}), Severity: OK}
	switch {
	case d == nil && familyRefused(si):
		r.Severity, r.Fix = Fail, familyFix
		r.Message = fmt.Sprintf("the derived Service %s/%s does not exist: this cluster refuses it, not being configured for the exported IP family (see the import check)", sv.Namespace, name)
	case d == nil:
		r.Severity = Fail
		r.Message = fmt.Sprintf("the derived Service %s/%s does not exist: nothing serves the import in this cluster", sv.Namespace, name)
		r.Fix, r.sync = "Run sync, which recreates the derived Service (or check that sync --watch runs):", syncPass(sv.Namespace)
	case !names.IsManaged(d.Labels):
		r.Severity = Fail
		r.Message = fmt.Sprintf("Service %s/%s was not created by kubectl-mcs: sync will not take it over", sv.Namespace, name)
		r.Fix = fmt.Sprintf("Delete or rename that Service in %q so that sync can create the derived Service.", m.ID)
	case derivedPorts(d) != importPorts(si):
		// kube-proxy serves the Service's ports only: a port of the import it lacks is refused.
		r.Severity = Fail
		r.Message = fmt.Sprintf("ports %s differ from the ServiceImport's %s: connections to a port it lacks are refused", derivedPorts(d), importPorts(si))
		r.Fix = "Run sync, which writes the derived Service's ports from the import (if sync --watch runs, the export-conditions check names a write it cannot make):"
		r.sync = syncPass(sv.Namespace)
	default:
		r.Message = "exists, created by kubectl-mcs"
	}
	return r
}

// derivedPorts and importPorts render ports as name:port/protocol, sorted, "" meaning TCP.
func derivedPorts(d *corev1.Service) string {
	var ps []string
	for _, p := range d.Spec.Ports {
		ps = append(ps, renderPort(p.Name, p.Port, p.Protocol))
	}
	return portList(ps)
}

func importPorts(si *mcsv1beta1.ServiceImport) string {
	var ps []string
	for _, p := range si.Spec.Ports {
		ps = append(ps, renderPort(p.Name, p.Port, p.Protocol))
	}
	return portList(ps)
}

func renderPort(name string, port int32, proto corev1.Protocol) string {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	s := fmt.Sprintf("%d/%s", port, proto)
	if name != "" {
		s = name + ":" + s
	}
	return s
}

func portList(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	sort.Strings(ps)
	return strings.Join(ps, ",")
}

// checkImportIP: the import's type matches the exports', and its IPs are the derived Service's.
func checkImportIP(m Cluster, sv service, si *mcsv1beta1.ServiceImport, d *corev1.Service) Result {
	r := Result{Check: CheckImportIP, Cluster: m.ID, Object: objectName("serviceimport", sv.key), Severity: OK}
	want := sv.item.Type
	var dIPs []string
	headless := false
	if d != nil {
		headless = d.Spec.ClusterIP == corev1.ClusterIPNone
		for _, ip := range d.Spec.ClusterIPs {
			if ip != corev1.ClusterIPNone {
				dIPs = append(dIPs, ip)
			}
		}
	}
	switch {
	case want != "" && string(si.Spec.Type) != want:
		r.Severity = Fail
		r.Message = fmt.Sprintf("type %s, but the exports make it %s", si.Spec.Type, want)
	case si.Spec.Type == mcsv1beta1.Headless && (len(si.Spec.IPs) > 0 || (d != nil && !headless)):
		r.Severity = Fail
		r.Message = fmt.Sprintf("Headless, but has IPs (import %s, derived Service %s)", listOr(si.Spec.IPs), listOr(dIPs))
	case si.Spec.Type == mcsv1beta1.Headless:
		r.Message = "Headless: no clusterset IP, as expected"
	case len(si.Spec.IPs) == 0:
		r.Severity, r.Message = Fail, "ClusterSetIP without an IP yet"
	case d != nil && headless:
		r.Severity, r.Message = Fail, "ClusterSetIP, but the derived Service is headless"
	case d != nil && !sameSet(si.Spec.IPs, dIPs):
		r.Severity = Fail
		r.Message = fmt.Sprintf("spec.ips %s differ from the derived Service's cluster IPs %s", strings.Join(si.Spec.IPs, ","), strings.Join(dIPs, ","))
	default:
		r.Message = "ClusterSetIP " + strings.Join(si.Spec.IPs, ",")
	}
	if r.Severity == Fail {
		r.Fix, r.sync = "Run sync, which sets the import from the derived Service (or check that sync --watch runs):", syncPass(sv.Namespace)
	}
	return r
}

// checkSlices: one copy per exporting cluster, correctly labelled, holding only endpoints its
// source still has; and no copy from outside the clusterset.
func checkSlices(s *Snapshot, m Cluster, sv service, o *objects, exporting []string, objs []*objects, members map[string]int, derived string) []Result {
	var out []Result
	bySource := map[string][]*discoveryv1.EndpointSlice{}
	for _, c := range o.copies[sv.key] {
		bySource[c.Labels[mcsv1beta1.LabelSourceCluster]] = append(bySource[c.Labels[mcsv1beta1.LabelSourceCluster]], c)
	}
	for _, src := range exporting {
		obj := fmt.Sprintf("endpointslices/%s/%s from %s", sv.Namespace, sv.Name, src)
		r := Result{Check: CheckSlices, Cluster: m.ID, Object: obj, Severity: OK}
		copies := bySource[src]
		i, known := members[src]
		sourceRead := known && readable(s.Clusters[i])
		var have map[string]bool
		if sourceRead {
			have = addresses(objs[i].sources(sv.key))
		}
		var bad, badNames, stale []string
		n := 0
		for _, c := range copies {
			if problems := sliceLabels(c, derived); problems != "" {
				bad, badNames = append(bad, c.Name+": "+problems), append(badNames, c.Name)
			}
			if !sourceRead {
				continue
			}
			var gone []string
			for _, e := range c.Endpoints {
				n++
				for _, a := range e.Addresses {
					if !have[a] {
						gone = append(gone, a)
					}
				}
			}
			if len(gone) > 0 {
				stale = append(stale, fmt.Sprintf("%s (%s old) holds %s, which %q no longer has", c.Name, age(s.Now, c.CreationTimestamp), strings.Join(gone, ","), src))
			}
		}
		switch {
		case len(copies) == 0 && (!sourceRead || len(objs[i].sources(sv.key)) > 0):
			r.Severity, r.Message, r.Fix, r.sync = Fail, fmt.Sprintf("no EndpointSlice from %q: its endpoints are not reachable from here", src), runSyncFix, syncPass(sv.Namespace)
		case len(bad) > 0:
			r.Severity, r.Message = Fail, "wrongly labelled: "+strings.Join(bad, "; ")
			r.Fix, r.sync = "Delete those slices (they are not sync's), then run sync:", syncPass(sv.Namespace)
			r.Commands = []shell.Command{deleteSlicesCommand(m, sv.Namespace, badNames)}
		case len(stale) > 0:
			r.Severity, r.Message = Fail, "stale: "+strings.Join(stale, "; ")
			r.Fix, r.sync = "Run sync, which replaces copies whose endpoints are gone (or check that sync --watch runs):", syncPass(sv.Namespace)
		case !sourceRead:
			r.Severity, r.Message = Warn, fmt.Sprintf("%d slice(s), last known: %q cannot be read", len(copies), src)
			r.Fix = "See the reachable check for that cluster."
		default:
			r.Message = fmt.Sprintf("%d slice(s), %d endpoint(s), all present in %q", len(copies), n, src)
		}
		out = append(out, r)
	}
	// Copies from clusters that do not export it (any more), or from outside the clusterset.
	var srcs []string
	for src := range bySource {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	for _, src := range srcs {
		if contains(exporting, src) {
			continue
		}
		var list []string
		for _, c := range bySource[src] {
			list = append(list, fmt.Sprintf("%s (%s old)", c.Name, age(s.Now, c.CreationTimestamp)))
		}
		obj := fmt.Sprintf("endpointslices/%s/%s from %s", sv.Namespace, sv.Name, src)
		if si := o.imports[sv.key]; si != nil && slices.Contains(sv.item.UnreadExporters, src) && slices.Contains(sourcesOf(si), src) {
			// The import records the source: a member outside this read (--contexts), not checked.
			out = append(out, Result{Check: CheckSlices, Cluster: m.ID, Object: obj, Severity: OK,
				Message: fmt.Sprintf("%d slice(s) from %q, outside --contexts (not checked)", len(bySource[src]), src)})
			continue
		}
		if _, ok := members[src]; ok {
			out = append(out, Result{Check: CheckSlices, Cluster: m.ID, Object: obj, Severity: Fail,
				Message: fmt.Sprintf("stale: %s come from %q, which does not export %s", strings.Join(list, ", "), src, sv.Name),
				Fix:     "Run sync, which deletes the copies of clusters that stopped exporting (or check that sync --watch runs):", sync: syncPass(sv.Namespace)})
			continue
		}
		out = append(out, Result{Check: CheckForeignSlice, Cluster: m.ID, Object: obj, Severity: Fail,
			Message:  fmt.Sprintf("%s come from cluster %q, which is not in the clusterset: sync leaves them alone", strings.Join(list, ", "), src),
			Fix:      "Add that cluster to --contexts if it is a member, else delete the slices:",
			Commands: []shell.Command{deleteForeignSlicesCommand(m, sv.Namespace, src)}})
	}
	return out
}

// sliceLabels says what is wrong with a copy's labels ("" when nothing).
func sliceLabels(c *discoveryv1.EndpointSlice, derived string) string {
	var p []string
	if c.Labels[discoveryv1.LabelServiceName] != derived {
		p = append(p, fmt.Sprintf("%s=%q, not %q", discoveryv1.LabelServiceName, c.Labels[discoveryv1.LabelServiceName], derived))
	}
	if c.Labels[names.EndpointSliceManagedByLabel] != names.EndpointSliceManagedByValue {
		p = append(p, fmt.Sprintf("%s=%q, not %q", names.EndpointSliceManagedByLabel, c.Labels[names.EndpointSliceManagedByLabel], names.EndpointSliceManagedByValue))
	}
	return strings.Join(p, ", ")
}

func addresses(slices []*discoveryv1.EndpointSlice) map[string]bool {
	out := map[string]bool{}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				out[a] = true
			}
		}
	}
	return out
}
