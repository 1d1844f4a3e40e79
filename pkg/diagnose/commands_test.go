package diagnose

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/shellparse"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// oddContext is member2's context: a kubeconfig context may hold blanks and brackets, and its
// ID is given in --contexts. Every command naming it must still paste.
const oddContext = "east (member2)"

// commandFaults break the links whose fixes give commands: together they make diagnose print
// every command it can (TestEveryFixCommandPastes holds them to the makers of commands.go).
var commandFaults = map[string]func(s *Snapshot){
	"member down": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Cluster = snapshot.Cluster{ID: "member2", Context: oddContext, IDSource: clusterset.IDFromFlag, State: snapshot.Unreachable, Message: "connection refused"}
	},
	"CRDs missing": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Cluster = snapshot.Cluster{ID: "member2", Context: oddContext, IDSource: clusterset.IDFromFlag, State: snapshot.NoCRDs}
	},
	"v1alpha1 only":         func(s *Snapshot) { memberOf(s, "member2").ServedVersions = []string{"v1alpha1"} },
	"CoreDNS without block": func(s *Snapshot) { memberOf(s, "member2").CoreDNS.Data["Corefile"] = ".:53 {\n}\n" },
	"DNS server deleted":    func(s *Snapshot) { memberOf(s, "member2").DNSServer, memberOf(s, "member2").DNSServerSlices = nil, nil },
	"DNS server recreated":  func(s *Snapshot) { memberOf(s, "member2").DNSServer.Spec.ClusterIPs = []string{"10.96.7.7"} },
	"DNS block forwards nowhere": func(s *Snapshot) {
		memberOf(s, "member2").CoreDNS.Data["Corefile"] = DNSMarker + "\nclusterset.local:53 {\n}\n# kubectl-mcs:end\n"
	},
	"DNS server not ready": func(s *Snapshot) {
		for i := range memberOf(s, "member2").DNSServerSlices[0].Endpoints {
			memberOf(s, "member2").DNSServerSlices[0].Endpoints[i].Conditions.Ready = ptr(false)
		}
	},
	"ExternalName": func(s *Snapshot) {
		memberOf(s, "member2").Services[0].Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}
	},
	"export of a missing Service": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Services, m.EndpointSlices = m.Services[1:], m.EndpointSlices[1:]
	},
	"the user's own export of a missing Service": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Services, m.EndpointSlices = m.Services[1:], m.EndpointSlices[1:]
		m.ServiceExports[0].Labels = nil
	},
	"sync never ran": func(s *Snapshot) {
		e := memberOf(s, "member2").ServiceExports[0]
		e.Status.Conditions, e.ManagedFields = nil, e.ManagedFields[:1]
		e.CreationTimestamp = synced
		e.CreationTimestamp.Time = now
	},
	"conflict": func(s *Snapshot) {
		sv := memberOf(s, "member2").Services[0]
		sv.Spec.Ports[0].Port, sv.Spec.Ports[0].Name = 8080, ""
	},
	"no ready endpoints": func(s *Snapshot) {
		for _, sl := range memberOf(s, "member2").EndpointSlices[:1] {
			for i := range sl.Endpoints {
				sl.Endpoints[i].Conditions.Ready = ptr(false)
			}
		}
	},
	"foreign ServiceImport": func(s *Snapshot) { memberOf(s, "member2").ServiceImports[0].Labels = nil },
	"namespace missing": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Namespaces, m.ServiceExports, m.ServiceImports, m.Services, m.EndpointSlices = []string{"default"}, nil, nil, nil, nil
	},
	"derived Service gone": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.Services = m.Services[:1]
	},
	"wrongly labelled copy": func(s *Snapshot) {
		delete(memberOf(s, "member2").EndpointSlices[1].Labels, names.EndpointSliceManagedByLabel)
	},
	"slice from outside": func(s *Snapshot) {
		m := memberOf(s, "member2")
		m.EndpointSlices = append(m.EndpointSlices, copyOf("member9", "10.19.0.1"))
	},
	"Karmada": func(s *Snapshot) {
		s.Karmada = &Karmada{Context: "karmada apiserver", Status: &status.KarmadaServiceStatusList{
			ServiceExports: []status.KarmadaObjectStatus{
				{Namespace: "demo", Name: "serve", Health: status.Degraded, Problems: []string{"No PropagationPolicy selects it."}},
				{Namespace: "demo", Name: "other", Health: status.Degraded, Problems: []string{"No ServiceExport on the control plane."}},
				{Namespace: "demo", Name: "third", Health: status.Degraded, Problems: []string{"Applied=False."}}},
		}}
	},
}

// makerOf names the function of commands.go that built argv.
func makerOf(c shell.Command) string {
	argv := c.Stages()[0]
	words := strings.Join(argv, " ")
	has := func(w string) bool { return slices.Contains(argv, w) }
	switch {
	case strings.HasPrefix(words, "kubectl mcs init") && has("--dns"):
		return "initDNSCommand"
	case strings.HasPrefix(words, "kubectl mcs init"):
		return "initCommand"
	case strings.HasPrefix(words, "kubectl mcs dns-server"):
		return "dnsServerCommand"
	case strings.HasPrefix(words, "kubectl mcs unexpose"), has("delete") && has("serviceexport"):
		return "removeExportCommand"
	case strings.HasPrefix(words, "kubectl mcs sync"):
		return "syncCommand"
	case strings.HasPrefix(words, "kubectl mcs expose"):
		return "karmadaExposeCommand"
	case has("--raw"):
		return "readyzCommand"
	case has("pods"):
		return "dnsPodsCommand"
	case has("get") && has("endpointslices"):
		return "endpointSlicesCommand"
	case has("delete") && has("serviceimport"):
		return "deleteImportCommand"
	case has("delete") && has("endpointslices") && has("-l"):
		return "deleteForeignSlicesCommand"
	case has("delete") && has("endpointslices"):
		return "deleteSlicesCommand"
	case has("describe"):
		return "karmadaDescribeCommand"
	case has("logs"):
		return "logsCommand"
	case has("create") && has("namespace"):
		return "createNamespaceCommand"
	}
	return ""
}

// Every command diagnose prints, in the text output as a user copies it and in -o json, is read
// by a POSIX shell parser as exactly one command of the words it was built from; no word ends
// with the full stop of a sentence; every context, namespace and label value names what exists.
func TestEveryFixCommandPastes(t *testing.T) {
	made := map[string]bool{}
	for name, mutate := range commandFaults {
		s := healthy()
		m2 := memberOf(s, "member2")
		m2.Context, m2.IDSource = oddContext, clusterset.IDFromFlag
		mutate(s)
		r := Run(s)
		var want [][][]string
		for _, x := range r.Results {
			if x.Severity == OK {
				continue
			}
			if strings.Contains(x.Fix, "kubectl ") {
				t.Errorf("%s: a command in the fix's sentence: %q", name, x.Fix)
			}
			for _, c := range x.Commands {
				want = append(want, c.Stages())
				made[makerOf(c)] = true
				checkWords(t, name, s, c.Stages())
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: no command printed:\n%s", name, failed(r))
		}
		var text bytes.Buffer
		if err := PrintText(&text, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := printedCommands(t, text.String()); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the text output's commands parse to\n%q\nwant\n%q\n%s", name, got, want, text.String())
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Results []struct {
				Commands []string `json:"commands"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var fromJSON [][][]string
		for _, x := range doc.Results {
			for _, line := range x.Commands {
				p, err := shellparse.Pipeline(line)
				if err != nil {
					t.Errorf("%s: json command %q: %v", name, line, err)
				}
				fromJSON = append(fromJSON, p)
			}
		}
		if !reflect.DeepEqual(fromJSON, want) {
			t.Errorf("%s: -o json's commands parse to %q, want %q", name, fromJSON, want)
		}
	}
	for _, f := range makers(t) {
		if !made[f] {
			t.Errorf("no fault makes diagnose print %s's command: add one to commandFaults", f)
		}
	}
}

// printedCommands parses the commands of the text output: the lines under a fix that start with
// kubectl, continued while a line ends with a backslash.
func printedCommands(t *testing.T, text string) [][][]string {
	t.Helper()
	var out [][][]string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], strings.Repeat(" ", 14)+"kubectl ") {
			continue
		}
		block := lines[i]
		for strings.HasSuffix(lines[i], " \\") && i+1 < len(lines) {
			i++
			block += "\n" + lines[i]
		}
		for _, l := range strings.Split(block, "\n") {
			if len([]rune(l)) > DefaultWidth {
				t.Errorf("%d columns: %q", len([]rune(l)), l)
			}
		}
		p, err := shellparse.Pipeline(block)
		if err != nil {
			t.Errorf("%v:\n%s", err, block)
			continue
		}
		out = append(out, p)
	}
	return out
}

// checkWords holds each word to what the snapshot holds.
func checkWords(t *testing.T, fault string, s *Snapshot, stages [][]string) {
	t.Helper()
	contexts := map[string]bool{}
	var args []string
	for _, m := range s.Clusters {
		contexts[m.Context] = true
		args = append(args, contextsArg(m))
	}
	if s.Karmada != nil {
		contexts[s.Karmada.Context] = true
	}
	namespaces := map[string]bool{"demo": true, names.SystemNamespace: true}
	labels := map[string]bool{
		discoveryv1.LabelServiceName + "=serve":         true,
		"app.kubernetes.io/name=" + names.DNSServerName: true,
		"app.kubernetes.io/name=" + syncApp:             true,
		mcsv1beta1.LabelSourceCluster + "=member9":      true,
	}
	for _, argv := range stages {
		if argv[0] != "kubectl" {
			t.Errorf("%s: %q is not kubectl", fault, argv)
		}
		for i, w := range argv {
			next := ""
			if i+1 < len(argv) {
				next = argv[i+1]
			}
			switch {
			case strings.HasSuffix(w, ".") || strings.ContainsAny(w, "\n"):
				t.Errorf("%s: word %q of %q ends a sentence", fault, w, argv)
			case w == "--context" && !contexts[next], w == "-n" && !namespaces[next], w == "-l" && !labels[next]:
				t.Errorf("%s: %s %q names nothing the clusterset holds (%q)", fault, w, next, argv)
			case strings.HasPrefix(w, "--karmada-context=") && !contexts[strings.TrimPrefix(w, "--karmada-context=")]:
				t.Errorf("%s: %q", fault, w)
			case strings.HasPrefix(w, "--contexts="):
				for _, c := range strings.Split(strings.TrimPrefix(w, "--contexts="), ",") {
					if !slices.Contains(args, c) {
						t.Errorf("%s: %q in %q is not a member as --contexts names it (%q)", fault, c, w, args)
					}
				}
			}
		}
	}
}

// makers are the functions of commands.go that build a command.
func makers(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "commands.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Type.Results != nil {
			if sel, ok := fn.Type.Results.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
				out = append(out, fn.Name.Name)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("%d command makers in commands.go: %q", len(out), out)
	}
	return out
}

// unexpose removes only what expose wrote: the user's own export is removed with kubectl delete.
func TestRemoveExportOfTheUsersOwn(t *testing.T) {
	s := healthy()
	commandFaults["the user's own export of a missing Service"](s)
	expectHas(t, Run(s), CheckExportService, "member2", Fail, "there is no Service demo/serve", "\nkubectl --context member2 -n demo delete serviceexport serve")
	s = healthy()
	commandFaults["export of a missing Service"](s)
	expectHas(t, Run(s), CheckExportService, "member2", Fail, "there is no Service demo/serve", "\nkubectl mcs unexpose serve -n demo --contexts=member2")
}
