package diagnose

import (
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// The commands a fix gives, each built here from the members' contexts and the objects' names
// (never written into the fix's sentence): every function below is run through a shell parser
// by commands_test.go.

// contextsArg is a member as --contexts names it: CTX, or CTX=ID when the ID was given there.
func contextsArg(m Cluster) string {
	if m.IDSource == clusterset.IDFromFlag && m.ID != m.Context {
		return m.Context + "=" + m.ID
	}
	return m.Context
}

func readyzCommand(m Cluster) shell.Command {
	return shell.Kubectl("--context", m.Context, "get", "--raw", "/readyz")
}

func initCommand(m Cluster) shell.Command {
	return shell.MCS("init", "--contexts="+contextsArg(m))
}

func initDNSCommand(m Cluster) shell.Command {
	return shell.MCS("init", "--dns", "--contexts="+contextsArg(m))
}

// dnsServerCommand applies the DNS server's Deployment and Service, as docs/dns.md does.
func dnsServerCommand(m Cluster) shell.Command {
	return shell.MCS("dns-server", "--print-manifests", "--context", m.Context).
		Pipe("kubectl", "--context", m.Context, "apply", "-f", "-")
}

func dnsPodsCommand(m Cluster) shell.Command {
	return shell.Kubectl("--context", m.Context, "-n", names.SystemNamespace, "get", "pods", "-l", "app.kubernetes.io/name="+names.DNSServerName)
}

// removeExportCommand removes the export: unexpose for one expose wrote (managed), which takes
// what it wrote with it; kubectl delete for the user's own, which unexpose leaves alone.
func removeExportCommand(m Cluster, k key, managed bool) shell.Command {
	if !managed {
		return shell.Kubectl("--context", m.Context, "-n", k.Namespace, "delete", "serviceexport", k.Name)
	}
	return shell.MCS("unexpose", k.Name, "-n", k.Namespace, "--contexts="+contextsArg(m))
}

// exportManaged says whether expose wrote m's export of sv.
func exportManaged(m Cluster, sv service) bool {
	for _, c := range sv.item.Clusters {
		if c.Cluster == m.ID && c.Export != nil {
			return c.Export.Managed
		}
	}
	return false
}

func endpointSlicesCommand(m Cluster, k key) shell.Command {
	return shell.Kubectl("--context", m.Context, "-n", k.Namespace, "get", "endpointslices", "-l", discoveryv1.LabelServiceName+"="+k.Name)
}

func createNamespaceCommand(m Cluster, ns string) shell.Command {
	return shell.Kubectl("--context", m.Context, "create", "namespace", ns)
}

func deleteImportCommand(m Cluster, k key) shell.Command {
	return shell.Kubectl("--context", m.Context, "-n", k.Namespace, "delete", "serviceimport", k.Name)
}

func deleteSlicesCommand(m Cluster, ns string, slices []string) shell.Command {
	return shell.Kubectl(append([]string{"--context", m.Context, "-n", ns, "delete", "endpointslices"}, slices...)...)
}

func deleteForeignSlicesCommand(m Cluster, ns, source string) shell.Command {
	return shell.Kubectl("--context", m.Context, "-n", ns, "delete", "endpointslices", "-l", mcsv1beta1.LabelSourceCluster+"="+source)
}

// syncCommand is sync over the clusterset read: one pass over a namespace, or --watch.
func syncCommand(s *Snapshot, run syncRun) shell.Command {
	ctxs := make([]string, len(s.Clusters))
	for i, m := range s.Clusters {
		ctxs[i] = contextsArg(m)
	}
	args := []string{"sync", "-n", run.namespace}
	if run.watch {
		args = []string{"sync", "--watch"}
	}
	return shell.MCS(append(args, "--contexts="+strings.Join(ctxs, ","))...)
}

func karmadaExposeCommand(ctx, ns, name string) shell.Command {
	return shell.MCS("expose", name, "-n", ns, "--karmada-context="+ctx, "--api=serviceexport")
}

func karmadaDescribeCommand(ctx, kind, ns, name string) shell.Command {
	return shell.Kubectl("--context", ctx, "-n", ns, "describe", kind, name)
}
