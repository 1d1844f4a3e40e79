package status

// Tables and descriptions of a Karmada control plane's view.

import (
	"bytes"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// KarmadaHeaders are the MultiClusterService table's columns: what fits printers.Width by
// default (STATUS sums up the conditions), the lists and conditions appended by -o wide.
func KarmadaHeaders(wide bool) []string {
	h := []string{"namespace", "name", "status", "types", "age"}
	if wide {
		h = append(h, "ports", "providers", "consumers", "service-applied", "endpointslice-dispatched")
	}
	return h
}

// KarmadaObjectHeaders are the ServiceExport/ServiceImport table's columns, as KarmadaHeaders.
func KarmadaObjectHeaders(wide bool) []string {
	h := []string{"kind", "namespace", "name", "status", "age"}
	if wide {
		h = append(h, "type", "ports", "placed-in", "policies")
	}
	return h
}

// PrintKarmada writes the MultiClusterServices table, then the ServiceExport/ServiceImport one.
func PrintKarmada(w io.Writer, l *KarmadaServiceStatusList, o PrintOptions) error {
	if len(l.MultiClusterServices) > 0 {
		var rows [][]string
		var health []Health
		for _, m := range l.MultiClusterServices {
			row := []string{m.Namespace, m.Name, string(m.Health), joinOr(m.Types, "<none>"), Age(m.CreationTimestamp, o.Now)}
			if o.Wide {
				row = append(row, PortsString(m.Ports), joinOr(m.ProviderClusters, "<all>"), joinOr(m.ConsumerClusters, "<all>"),
					condCell(m.Conditions, ConditionServiceApplied), condCell(m.Conditions, ConditionEndpointSliceDispatched))
			}
			rows = append(rows, row)
			health = append(health, m.Health)
		}
		if err := table(w, KarmadaHeaders(o.Wide), rows, health, o); err != nil {
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
			row := []string{kind.name, s.Namespace, s.Name, string(s.Health), Age(s.CreationTimestamp, o.Now)}
			if o.Wide {
				row = append(row, typ, portsOrNone(s.Ports), joinOr(s.PlacedIn, "<none>"), joinOr(s.Policies, "<none>"))
			}
			rows = append(rows, row)
			health = append(health, s.Health)
		}
	}
	if len(rows) > 0 {
		if len(l.MultiClusterServices) > 0 && !o.NoHeaders {
			fmt.Fprintln(w)
		}
		if err := table(w, KarmadaObjectHeaders(o.Wide), rows, health, o); err != nil {
			return err
		}
	}
	return printBindings(w, l, len(l.MultiClusterServices)+len(rows) > 0, o)
}

// KarmadaBindingHeaders are the unscheduled ResourceBindings' columns: Karmada's reason, and its
// message with -o wide (the description shows it too).
func KarmadaBindingHeaders(wide bool) []string {
	h := []string{"resourcebinding", "namespace", "resource", "scheduled", "reason"}
	if wide {
		h = append(h, "message")
	}
	return h
}

// printBindings writes the table of unscheduled ResourceBindings, when there is one.
func printBindings(w io.Writer, l *KarmadaServiceStatusList, after bool, o PrintOptions) error {
	if len(l.ResourceBindings) == 0 {
		return nil
	}
	var rows [][]string
	var health []Health
	for _, b := range l.ResourceBindings {
		row := []string{b.Name, b.Namespace, b.Resource, string(b.Scheduled), orNone(b.Reason)}
		if o.Wide {
			row = append(row, b.Message)
		}
		rows, health = append(rows, row), append(health, Degraded)
	}
	if after && !o.NoHeaders {
		fmt.Fprintln(w)
	}
	return table(w, KarmadaBindingHeaders(o.Wide), rows, health, o)
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

// karmadaAt is the column the Karmada descriptions' values start at.
const karmadaAt = 21

// DescribeKarmada writes the objects of one service on the control plane with every condition.
func DescribeKarmada(w io.Writer, l *KarmadaServiceStatusList, o PrintOptions) error {
	for i, m := range l.MultiClusterServices {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var b bytes.Buffer
		field := func(name, value string) { printers.Field(&b, 0, karmadaAt, name, value) }
		field("MultiClusterService", m.Namespace+"/"+m.Name)
		field("Status", string(m.Health))
		field("Types", joinOr(m.Types, "<none>"))
		field("Ports", list(PortsString(m.Ports)))
		field("Providers", list(joinOr(m.ProviderClusters, "<all>")))
		field("Consumers", list(joinOr(m.ConsumerClusters, "<all>")))
		field("Service", map[bool]string{true: "exists", false: "missing"}[m.ServiceExists])
		field("Age", Age(m.CreationTimestamp, o.Now))
		writeProblems(&b, m.Problems, karmadaAt)
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
			var b bytes.Buffer
			field := func(name, value string) { printers.Field(&b, 0, karmadaAt, name, value) }
			field(kind.name, s.Namespace+"/"+s.Name+" ("+s.APIVersion+")")
			field("Status", string(s.Health))
			if kind.name == "ServiceImport" {
				field("Type", orNone(s.Type))
				field("Ports", list(PortsString(s.Ports)))
			}
			field("Placed in", list(joinOr(s.PlacedIn, "<none>")))
			field("Policies", list(joinOr(s.Policies, "<none>")))
			field("Age", Age(s.CreationTimestamp, o.Now))
			writeProblems(&b, s.Problems, karmadaAt)
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
	for _, rb := range l.ResourceBindings {
		fmt.Fprintln(w)
		var b bytes.Buffer
		field := func(name, value string) { printers.Field(&b, 0, karmadaAt, name, value) }
		field("ResourceBinding", rb.Namespace+"/"+rb.Name)
		field("Resource", rb.Resource+" ("+rb.APIVersion+")")
		field("Scheduled", string(rb.Scheduled))
		field("Reason", orNone(rb.Reason))
		field("Message", orNone(rb.Message))
		field("Age", Age(rb.CreationTimestamp, o.Now))
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}
