package main

// make bench-dns: kubectl mcs dns-server under load beside CoreDNS (the floor), both answering from
// the same member in the same run. One member holds dnsImports ServiceImports (ClusterSetIP) and a
// Headless one of dnsEndpoints endpoints, each with the derived Service and the EndpointSlices sync
// writes; the derived Services are the plain Services CoreDNS answers in cluster.local.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/internal/corednshost"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

const (
	dnsBeginMark = "<!-- bench-dns:begin (written by make bench-dns) -->"
	dnsEndMark   = "<!-- bench-dns:end -->"
	dnsNS        = "dnsbench"
	// dnsSource is the source-cluster label of the slices: the exporter sync copied them from.
	dnsSource = "member9"
	headless  = "web"
)

// dnsConfig is what -dns measures.
type dnsConfig struct {
	imports, endpoints, workers, rounds int
	duration                            time.Duration
}

// DNSResults is bench/out/dns.json.
type DNSResults struct {
	Date      string   `json:"date"`
	Binary    string   `json:"binary,omitempty"`
	Machine   string   `json:"machine"`
	Load      string   `json:"load"`     // the load average before the first run
	LoadAfter string   `json:"load_end"` // and after the last
	Imports   int      `json:"imports"`
	Endpoints int      `json:"headless_endpoints"`
	Workers   int      `json:"workers"`
	Rounds    int      `json:"rounds"`
	RunS      float64  `json:"run_s"` // each server's load per configuration and round
	Rows      []dnsRow `json:"rows"`
}

func benchDNS(ctx context.Context, c config, dc dnsConfig) error {
	b := &bench{config: c}
	if err := b.connect(); err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	m := b.members[0]
	res := &DNSResults{Date: time.Now().UTC().Format(time.RFC3339), Binary: binaryVersion(c.binary), Machine: machine(),
		Imports: dc.imports, Endpoints: dc.endpoints, Workers: dc.workers, Rounds: dc.rounds, RunS: dc.duration.Seconds()}
	logf("init %s; namespace %s: %d imports and a Headless one of %d endpoints", m.name, dnsNS, dc.imports, dc.endpoints)
	if out, err := exec.Command(c.binary, "--kubeconfig", c.kubeconfig, "init", "--contexts", m.name).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl mcs init: %v: %s", err, out)
	}
	version, err := mcsapi.ServedVersion(m.fast.Discovery())
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	if err := freshNamespace(ctx, m, dnsNS, 3*time.Minute); err != nil {
		return err
	}
	if err := parallel(16, dc.imports, func(i int) error { return dnsImport(ctx, m, version, dnsName(i), 2) }); err != nil {
		return err
	}
	if err := dnsImport(ctx, m, version, headless, dc.endpoints); err != nil {
		return err
	}

	ours, stop, err := startDNSServer(ctx, c, m.name)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "bench-coredns-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	floor, err := startCoreDNS(ctx, c, m.name, dir)
	if err != nil {
		return err
	}
	defer floor.Stop()
	cases := dnsCases(dc)
	for _, k := range cases { // both answer everything before the load starts
		for _, s := range []struct{ addr, name string }{{ours, k.ours(dc.imports - 1)}, {floor.Addr, k.floor(dc.imports - 1)}} {
			if err := waitAnswered(ctx, s.addr, s.name); err != nil {
				return err
			}
		}
	}
	res.Load = loadAvg()
	res.Rows = runDNSLoad(ctx, dc, cases, ours, floor.Addr)
	res.LoadAfter = loadAvg()
	table := dnsTable(res)
	fmt.Println(table)
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(outDir, "dns.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if c.markdown == "" {
		return nil
	}
	return rewriteSection(c.markdown, dnsBeginMark, dnsEndMark, table)
}

func dnsName(i int) string { return fmt.Sprintf("svc-%04d", i) }

// dnsImport writes what sync writes in an importing member for service name: the derived Service
// (headless for the Headless import), the ServiceImport naming its IP, and the copies of
// the exporter's EndpointSlices (1,000 endpoints each, the API's maximum), with hostnames.
func dnsImport(ctx context.Context, m *member, version, name string, endpoints int) error {
	derived := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: names.DerivedServiceName(name), Namespace: dnsNS, Labels: mcsapi.ManagedLabels()},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}}
	if name == headless {
		derived.Spec.ClusterIP = corev1.ClusterIPNone
	}
	derived, err := m.fast.CoreV1().Services(dnsNS).Create(ctx, derived, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("%s: service %s: %w", m.name, name, err)
	}
	svc := derived.DeepCopy()
	svc.Name = name
	imp := mcsapi.ServiceImportFromService(version, svc)
	if name != headless {
		_ = unstructured.SetNestedStringSlice(imp.Object, derived.Spec.ClusterIPs, "spec", "ips")
	}
	if _, err := m.dyn.Resource(mcsapi.GVR(version, mcsapi.ServiceImports)).Namespace(dnsNS).Create(ctx, imp, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: serviceimport %s: %w", m.name, name, err)
	}
	for first := 0; first < endpoints; first += 1000 {
		sl := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: dnsNS, Name: names.EndpointSliceName(name, dnsSource, fmt.Sprint(first/1000)), Labels: map[string]string{
				mcsv1beta1.LabelServiceName: name, mcsv1beta1.LabelSourceCluster: dnsSource,
				names.EndpointSliceManagedByLabel: names.EndpointSliceManagedByValue, discoveryv1.LabelServiceName: derived.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(8080))}},
		}
		for i := first; i < min(first+1000, endpoints); i++ {
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.20.%d.%d", i/250, i%250+1)},
				Hostname: ptr.To(fmt.Sprintf("%s-%d", name, i)), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		if _, err := m.fast.DiscoveryV1().EndpointSlices(dnsNS).Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: endpointslice %s: %w", m.name, sl.Name, err)
		}
	}
	return nil
}

// startDNSServer runs `kubectl mcs dns-server` for member on a free loopback port; stop ends it by
// its PID.
func startDNSServer(ctx context.Context, c config, member string) (addr string, stop func(), err error) {
	port, err := corednshost.FreePort()
	if err != nil {
		return "", nil, err
	}
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	log, err := os.Create(filepath.Join(outDir, "dns-server.log"))
	if err != nil {
		return "", nil, err
	}
	defer log.Close()
	cmd := exec.Command(c.binary, "--kubeconfig", c.kubeconfig, "dns-server", "--context", member, "--listen", addr)
	cmd.Stdout, cmd.Stderr = log, log
	dieWithBench(cmd)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	if err := waitAnswered(ctx, addr, "clusterset.local."); err != nil {
		stop()
		return "", nil, fmt.Errorf("dns-server (log %s): %w", log.Name(), err)
	}
	return addr, stop, nil
}

// startCoreDNS runs the bed's CoreDNS on the host with the Corefile kubeadm writes, its kubernetes
// plugin reading member: what a member's pods ask for cluster.local. Its Corefile and log go to dir.
func startCoreDNS(ctx context.Context, c config, member, dir string) (*corednshost.Process, error) {
	kubeadm, err := os.ReadFile("test/testbed/kubeadm.Corefile")
	if err != nil {
		return nil, err
	}
	port, err := corednshost.FreePort()
	if err != nil {
		return nil, err
	}
	corefile, err := corednshost.ForHost(string(kubeadm), c.kubeconfig, member, port)
	if err != nil {
		return nil, err
	}
	return corednshost.Start(ctx, corednshost.Binary(), dir, corefile, port, time.Minute)
}

// waitAnswered waits until addr answers name (A; SOA for a zone) with NOERROR and records: the
// server's caches hold everything written before.
func waitAnswered(ctx context.Context, addr, name string) error {
	qtype := dns.TypeA
	if strings.Count(name, ".") == 2 {
		qtype = dns.TypeSOA
	}
	var last string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		r, err := corednshost.Query(addr, name, qtype)
		if err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
			return nil
		}
		last = fmt.Sprint(err)
		if r != nil {
			last = dns.RcodeToString[r.Rcode]
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: %s not answered within 2m (last: %s)", addr, name, last)
}
