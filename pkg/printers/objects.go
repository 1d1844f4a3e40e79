package printers

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// OutputFlags is -o of the commands that write (init, expose, unexpose, sync): by default one
// line per object written, or one of Formats.
type OutputFlags struct {
	Format string
	// Formats are the values -o accepts besides the default; json, yaml and name when empty.
	Formats []string
	// Usage is -o's help; "Output format. One of: (FORMATS)." when empty.
	Usage string
}

// AllowedFormats lists what -o accepts.
func (f *OutputFlags) AllowedFormats() []string {
	if len(f.Formats) == 0 {
		return []string{"json", "yaml", "name"}
	}
	return f.Formats
}

// AddFlags registers -o.
func (f *OutputFlags) AddFlags(cmd *cobra.Command) {
	usage := f.Usage
	if usage == "" {
		usage = outputUsage(f.AllowedFormats())
	}
	cmd.Flags().StringVarP(&f.Format, "output", "o", f.Format, usage)
}

// Validate refuses a format the command does not print.
func (f *OutputFlags) Validate() error {
	if f.Format == "" || slices.Contains(f.AllowedFormats(), f.Format) {
		return nil
	}
	return unknownFormat(f.Format, f.AllowedFormats())
}

// Documents says whether -o asks for the objects themselves (json or yaml) rather than lines.
func (f *OutputFlags) Documents() bool { return f.Format == "json" || f.Format == "yaml" }

// Written is one object in one cluster, as a write left it.
type Written struct {
	Cluster string
	// Resource is kubectl's name of its resource: serviceexport.multicluster.x-k8s.io.
	Resource string
	Object   *unstructured.Unstructured
}

// PrintLine writes what was done to one object: "CLUSTER: RESOURCE/NAME" with -o name, else
// "CLUSTER: RESOURCE/NAME OPERATION[ -n NAMESPACE]" (kubectl's line, with the cluster: the same
// object is written in several clusters, and its lines would not tell them apart).
func (f *OutputFlags) PrintLine(out io.Writer, w Written, operation string) error {
	if f.Format == "name" {
		return PrintName(out, w.Cluster, w.Resource, w.Object.GetName())
	}
	name := w.Resource + "/" + w.Object.GetName()
	ns := ""
	if n := w.Object.GetNamespace(); n != "" {
		ns = " -n " + n
	}
	_, err := fmt.Fprintf(out, "%s: %s %s%s\n", w.Cluster, name, operation, ns)
	return err
}

// PrintName writes -o name's line of one object written: "CLUSTER: RESOURCE/NAME" (kubectl's
// name, headed by the cluster, as the same object is written in several).
func PrintName(out io.Writer, cluster, resource, name string) error {
	_, err := fmt.Fprintf(out, "%s: %s/%s\n", cluster, resource, name)
	return err
}

// PrintObjects writes the objects with -o yaml (documents, each headed by a comment naming its
// cluster, none for an object of no one cluster) or -o json (one List), in order, without
// managedFields as kubectl does by default. Other formats print nothing here.
func (f *OutputFlags) PrintObjects(out io.Writer, ws []Written) error {
	switch f.Format {
	case "yaml":
		for _, w := range ws {
			b, err := yaml.Marshal(withoutManagedFields(w.Object).Object)
			if err != nil {
				return err
			}
			head := "---\n"
			if w.Cluster != "" {
				head += "# cluster: " + w.Cluster + "\n"
			}
			if _, err := fmt.Fprintf(out, "%s%s", head, b); err != nil {
				return err
			}
		}
	case "json":
		items := make([]any, 0, len(ws))
		for _, w := range ws {
			items = append(items, withoutManagedFields(w.Object).Object)
		}
		list := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items}}
		return (&cliprinters.JSONPrinter{}).PrintObj(list, out)
	}
	return nil
}

func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	return c
}
