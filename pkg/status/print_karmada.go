package status

// Tables and descriptions of a Karmada control plane's view.

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KarmadaHeaders are the MultiClusterService table's columns.
func KarmadaHeaders() []string {
	return []string{"namespace", "name", "status", "types", "ports", "providers", "consumers", "service-applied", "endpointslice-dispatched", "age"}
}

// KarmadaObjectHeaders are the ServiceExport/ServiceImport table's columns.
func KarmadaObjectHeaders() []string {
	return []string{"kind", "namespace", "name", "status", "type", "ports", "placed-in", "policies", "age"}
}

// PrintKarmada writes the MultiClusterServices table, then the ServiceExport/ServiceImport one.
func PrintKarmada(w io.Writer, l *KarmadaServiceStatusList, o PrintOptions) error {
	if len(l.MultiClusterServices) > 0 {
		var rows [][]string
		var health []Health
		for _, m := range l.MultiClusterServices {
			rows = append(rows, []string{m.Namespace, m.Name, string(m.Health), joinOr(m.Types, "<none>"), PortsString(m.Ports),
				joinOr(m.ProviderClusters, "<all>"), joinOr(m.ConsumerClusters, "<all>"),
				condCell(m.Conditions, ConditionServiceApplied), condCell(m.Conditions, ConditionEndpointSliceDispatched),
				Age(m.CreationTimestamp, o.Now)})
			health = append(health, m.Health)
		}
		if err := table(w, KarmadaHeaders(), rows, health, o); err != nil {
			return err
		}
	}
	var rows [][]string
	var health []Health
	for _, kind := range []struct {
		name string
		objs []KarmadaObjectStatus
	}{{"ServiceExport", l.ServiceExports}, {"ServiceImport", l.ServiceImports}} {
		for _, s := range kind.objs {
			typ := "-"
			if kind.name == "ServiceImport" {
				typ = orNone(s.Type)
			}
			rows = append(rows, []string{kind.name, s.Namespace, s.Name, string(s.Health), typ, portsOrNone(s.Ports),
				joinOr(s.PlacedIn, "<none>"), joinOr(s.Policies, "<none>"), Age(s.CreationTimestamp, o.Now)})
			health = append(health, s.Health)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if len(l.MultiClusterServices) > 0 && !o.NoHeaders {
		fmt.Fprintln(w)
	}
	return table(w, KarmadaObjectHeaders(), rows, health, o)
}

func portsOrNone(ps []Port) string {
	if ps == nil {
		return "-"
	}
	return PortsString(ps)
}

// condCell renders a condition as "True" or "False(Reason)", "-" when absent.
func condCell(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			if c.Status == metav1.ConditionTrue || c.Reason == "" {
				return string(c.Status)
			}
			return string(c.Status) + "(" + c.Reason + ")"
		}
	}
	return "-"
}

// DescribeKarmada writes the objects of one service on the control plane with every condition.
func DescribeKarmada(w io.Writer, l *KarmadaServiceStatusList, o PrintOptions) error {
	for i, m := range l.MultiClusterServices {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var b strings.Builder
		field := func(name, value string) { fmt.Fprintf(&b, "%-21s%s\n", name+":", value) }
		field("MultiClusterService", m.Namespace+"/"+m.Name)
		field("Status", string(m.Health))
		field("Types", joinOr(m.Types, "<none>"))
		field("Ports", PortsString(m.Ports))
		field("Providers", joinOr(m.ProviderClusters, "<all>"))
		field("Consumers", joinOr(m.ConsumerClusters, "<all>"))
		field("Service", map[bool]string{true: "exists", false: "missing"}[m.ServiceExists])
		field("Age", Age(m.CreationTimestamp, o.Now))
		writeProblems(&b, m.Problems)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if err := describeConditions(w, m.Conditions, o.Now); err != nil {
			return err
		}
	}
	for _, kind := range []struct {
		name string
		objs []KarmadaObjectStatus
	}{{"ServiceExport", l.ServiceExports}, {"ServiceImport", l.ServiceImports}} {
		for _, s := range kind.objs {
			fmt.Fprintln(w)
			var b strings.Builder
			field := func(name, value string) { fmt.Fprintf(&b, "%-21s%s\n", name+":", value) }
			field(kind.name, s.Namespace+"/"+s.Name+" ("+s.APIVersion+")")
			field("Status", string(s.Health))
			if kind.name == "ServiceImport" {
				field("Type", orNone(s.Type))
				field("Ports", PortsString(s.Ports))
			}
			field("Placed in", joinOr(s.PlacedIn, "<none>"))
			field("Policies", joinOr(s.Policies, "<none>"))
			field("Age", Age(s.CreationTimestamp, o.Now))
			writeProblems(&b, s.Problems)
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			if len(s.Conditions) > 0 {
				if err := describeConditions(w, s.Conditions, o.Now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
