package statuscmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

func TestPrintFlags(t *testing.T) {
	for format, wantPrinter := range map[string]bool{"": false, "wide": false, "json": true, "yaml": true, "jsonpath={.items}": true, "jsonpath-as-json={.items}": true} {
		f := printers.NewPrintFlags()
		*f.OutputFormat = format
		p, err := f.ToPrinter()
		if err != nil || (p != nil) != wantPrinter {
			t.Errorf("-o %q: printer %v, err %v", format, p, err)
		}
	}
	f := printers.NewPrintFlags()
	*f.OutputFormat = "names"
	if _, err := f.ToPrinter(); err == nil || !strings.Contains(err.Error(), "wide, name, json, yaml") {
		t.Errorf("-o names: %v", err)
	}
	*f.OutputFormat = "go-template={{.kind}}"
	if _, err := f.ToPrinter(); err == nil || !strings.Contains(err.Error(), "go-template is not supported: use jsonpath") {
		t.Errorf("-o go-template: %v", err)
	}
}

func TestJSONPathOnTheList(t *testing.T) {
	f := printers.NewPrintFlags()
	*f.OutputFormat = "jsonpath={.apiVersion} {.items[0].name}"
	p, err := f.ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	l := status.Build([]snapshot.Cluster{{ID: "a", State: snapshot.Reachable}})
	l.Items = append(l.Items, status.MultiClusterServiceStatus{Name: "serve"})
	var b bytes.Buffer
	if err := p.PrintObj(l, &b); err != nil || b.String() != "mcs.kubectl.io/v1alpha1 serve" {
		t.Errorf("%q %v", b.String(), err)
	}
}

// -o name: one kind.group/name line per multi-cluster service (kubectl's form); none and only a
// line on stderr when there is none, as kubectl get -o name.
func TestOutputName(t *testing.T) {
	var out, errOut bytes.Buffer
	o := &Options{PrintFlags: printers.NewPrintFlags(), namespace: "demo", IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, now: time.Now}
	*o.PrintFlags.OutputFormat = "name"
	l := status.Build([]snapshot.Cluster{{ID: "a", State: snapshot.Reachable}})
	if err := o.print(&out, l); err != nil || out.String() != "" || !strings.Contains(errOut.String(), "No multi-cluster services found in demo namespace.") {
		t.Errorf("none: %q, %q, %v", out.String(), errOut.String(), err)
	}
	l.Items = append(l.Items, status.MultiClusterServiceStatus{Namespace: "demo", Name: "serve"}, status.MultiClusterServiceStatus{Namespace: "demo", Name: "web"})
	if err := o.print(&out, l); err != nil || out.String() != "serviceimport.multicluster.x-k8s.io/serve\nserviceimport.multicluster.x-k8s.io/web\n" {
		t.Errorf("-o name:\n%s%v", out.String(), err)
	}
	out.Reset()
	k := &status.KarmadaServiceStatusList{MultiClusterServices: []status.KarmadaMCSStatus{{Name: "serve"}}, ServiceExports: []status.KarmadaObjectStatus{{Name: "web"}}}
	if err := o.printKarmada(&out, k); err != nil || out.String() != "multiclusterservice.networking.karmada.io/serve\nserviceexport.multicluster.x-k8s.io/web\n" {
		t.Errorf("--karmada -o name:\n%s%v", out.String(), err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Service: "serve", AllNamespaces: true}, "across all namespaces"},
		{Options{Service: "Serve"}, `"Serve"`},
		{Options{ChunkSize: -1}, "--chunk-size"},
		{Options{Karmada: clusterset.KarmadaFlags{Enabled: true}, ChunkSize: 1}, ""},
	} {
		tc.o.PrintFlags = printers.NewPrintFlags()
		err := tc.o.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestWarnAndNothingRead(t *testing.T) {
	var errOut bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{ErrOut: &errOut}}
	clusters := []snapshot.Cluster{
		{ID: "a", Context: "ctx-a", State: snapshot.Reachable},
		{ID: "b", Context: "ctx-b", State: snapshot.Unreachable, Message: "unreachable: connection refused"},
		{ID: "c", Context: "ctx-c", State: snapshot.NoCRDs, Message: "no CRDs"},
	}
	o.warn(clusters, nil)
	// The unreachable cluster's exports are shown, from the others' copies, as (stale): the
	// warning says so (it once said they were missing). The command to run is a line of its own.
	if got := errOut.String(); !strings.Contains(got, `Warning: cluster "b" (context "ctx-b") is unreachable: connection refused; its exports are shown as the other members last copied them, endpoints marked (stale)`+"\n") ||
		!strings.Contains(got, `Warning: cluster "c" (context "ctx-c") has no ServiceExport/ServiceImport CRDs: it exports and imports nothing; to install them:`+"\n  kubectl mcs init --contexts=ctx-c\n") ||
		strings.Contains(got, "missing") || strings.Count(got, "\n") != 3 {
		t.Errorf("warnings:\n%s", got)
	}
	if err := nothingRead(clusters); err != nil {
		t.Errorf("one readable cluster is enough: %v", err)
	}
	if err := nothingRead(clusters[1:]); err == nil || !strings.Contains(err.Error(), `cluster "b": unreachable: connection refused; cluster "c": no CRDs`) {
		t.Errorf("nothing readable: %v", err)
	}

	// --watch: a line per change only, none for a cluster first seen reachable.
	errOut.Reset()
	last := map[string]snapshot.State{}
	o.warn(clusters, last)
	o.warn(clusters, last)
	clusters[1].State = snapshot.Reachable
	o.warn(clusters, last)
	if got := errOut.String(); strings.Count(got, "\n") != 4 || !strings.HasSuffix(got, "Cluster \"b\" (context \"ctx-b\") is reachable again\n") {
		t.Errorf("watch warnings:\n%s", got)
	}
}
