package diagnose

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// DNSMarker is the line `kubectl mcs init --dns` puts at the top of its block in the Corefile.
const DNSMarker = corefile.BeginMarker

const coreDNSObject = "configmap/kube-system/coredns"

// checkDNS: the CoreDNS Corefile holds init --dns's block (a warning when not: clusterset DNS is
// optional), and that block forwards the zone to a DNS server that can answer. Skipped without
// CoreDNS.
func checkDNS(s *Snapshot) []Result {
	var out []Result
	for _, m := range s.Clusters {
		if !readable(m) {
			continue
		}
		r := Result{Check: CheckDNS, Cluster: m.ID, Object: coreDNSObject, Severity: OK}
		switch {
		case m.CoreDNSErr != "":
			r.Severity, r.Message = Warn, "could not read the CoreDNS configuration: "+m.CoreDNSErr
			r.Fix = "Allow get on configmaps in kube-system to check DNS, or ignore this if init --dns is not used."
		case m.CoreDNS == nil:
			r.Message = "skipped: no CoreDNS ConfigMap kube-system/coredns"
		case !strings.Contains(m.CoreDNS.Data["Corefile"], DNSMarker):
			r.Severity, r.Message = Warn, "the Corefile has no kubectl-mcs block: clusterset names (NAME.NS.svc.clusterset.local) do not resolve here"
			r.Fix, r.Commands = "Add it if clusterset DNS is wanted:", []shell.Command{initDNSCommand(m)}
		default:
			r = checkForward(m)
		}
		out = append(out, r)
	}
	return out
}

// checkForward: the block forwards the zone to an address; when that is the ClusterIP of the DNS
// server's Service (the forward line names it, or the IP is the Service's), the Service exists,
// still has that IP and port, and has ready endpoints. An address given with --dns-server (a DNS
// server beside CoreDNS) cannot be checked from the apiserver.
func checkForward(m Cluster) Result {
	r := Result{Check: CheckDNS, Cluster: m.ID, Object: coreDNSObject, Severity: OK}
	svcName := names.SystemNamespace + "/" + names.DNSServerName
	apply, initDNS := dnsServerCommand(m), initDNSCommand(m)
	up, err := corefile.Forward(m.CoreDNS.Data["Corefile"])
	if err != nil {
		r.Severity, r.Message = Fail, "the kubectl-mcs block cannot forward the clusterset zone: "+err.Error()
		r.Fix, r.Commands = "Run the DNS server there, then write the block again:", []shell.Command{apply, initDNS}
		return r
	}
	host, port, _ := net.SplitHostPort(up.Addr)
	if up.Service != svcName && (m.DNSServer == nil || !slices.Contains(clusterIPs(m.DNSServer), host)) {
		r.Message = fmt.Sprintf("CoreDNS forwards the clusterset zone to %s (given with --dns-server: not checked)", up.Addr)
		return r
	}
	r.Object = "service/" + svcName
	ready := readyDNSEndpoints(m)
	switch {
	case m.DNSServerErr != "":
		r.Severity, r.Message = Warn, fmt.Sprintf("CoreDNS forwards the clusterset zone to %s, but the service could not be read: %s", up.Addr, m.DNSServerErr)
		r.Fix = "Allow get on services and list on endpointslices in " + names.SystemNamespace + " to check it."
	case m.DNSServer == nil:
		r.Severity, r.Message = Fail, fmt.Sprintf("service %s does not exist: CoreDNS forwards the clusterset zone to %s, and clusterset names fail (SERVFAIL)", svcName, up.Addr)
		r.Fix, r.Commands = "Run the DNS server there, then forward to its new ClusterIP:", []shell.Command{apply, initDNS}
	case !slices.Contains(clusterIPs(m.DNSServer), host) || !servesPort(m.DNSServer, port):
		r.Severity, r.Message = Fail, fmt.Sprintf("CoreDNS forwards the clusterset zone to %s, which is not service %s (cluster IPs %s, port 53): it was recreated since init --dns, and clusterset names fail (SERVFAIL)",
			up.Addr, svcName, strings.Join(clusterIPs(m.DNSServer), ","))
		r.Fix, r.Commands = "Forward to its ClusterIP of now:", []shell.Command{initDNS}
	case ready == 0:
		r.Severity, r.Message = Fail, fmt.Sprintf("service %s has no ready endpoints: CoreDNS forwards the clusterset zone to %s, and clusterset names fail (SERVFAIL)", svcName, up.Addr)
		r.Fix = "See why its pods are not ready with the first command; if the Deployment is gone, run the DNS server again with the second:"
		r.Commands = []shell.Command{dnsPodsCommand(m), apply}
	default:
		r.Message = fmt.Sprintf("CoreDNS forwards the clusterset zone to service %s (%s), %d ready endpoint(s)", svcName, up.Addr, ready)
	}
	return r
}

func clusterIPs(svc *corev1.Service) []string {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	return ips
}

func servesPort(svc *corev1.Service, port string) bool {
	for _, p := range svc.Spec.Ports {
		if strconv.Itoa(int(p.Port)) == port {
			return true
		}
	}
	return false
}

// readyDNSEndpoints counts the ready endpoints of the DNS server's slices (conditions.ready
// unset counts as ready, as the API says).
func readyDNSEndpoints(m Cluster) int {
	n := 0
	for _, s := range m.DNSServerSlices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}
