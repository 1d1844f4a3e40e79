//go:build traffic

package traffic

// The production path (make test-production): nothing of kubectl-mcs runs on the host. The image
// `make image` built is loaded into every node's containerd; the DNS server runs as the
// Deployment `dns-server --print-manifests` prints, in every member; `init --dns` forwards the
// zone to its Service; sync runs as the two replicas `kubectl mcs install` deploys in member1, or
// with TRAFFIC_SYNC_MODE=per-member as the two replicas of `sync --local` it deploys in every
// member.
// The seed tests then run unchanged, and the faults below each assert that no request failed and
// no object was replaced.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	host      = "member1" // where sync's Deployment runs
	systemNS  = "kubectl-mcs-system"
	syncName  = "kubectl-mcs-sync"
	dnsName   = "kubectl-mcs-dns"
	leaseName = "kubectl-mcs-sync"
)

var (
	production = os.Getenv("TRAFFIC_MODE") == "production"
	// The image under test and a rebuild of it with another version string (the rolling upgrade).
	syncImage   = os.Getenv("TRAFFIC_SYNC_IMAGE")
	syncArchive = os.Getenv("TRAFFIC_SYNC_ARCHIVE")
	nextImage   = os.Getenv("TRAFFIC_NEXT_IMAGE")
	nextArchive = os.Getenv("TRAFFIC_NEXT_ARCHIVE")
	testbedDir  = os.Getenv("TESTBED_DIR")
	// perMember: install --mode=per-member, a sync in every member (TRAFFIC_SYNC_MODE=per-member).
	perMember = os.Getenv("TRAFFIC_SYNC_MODE") == "per-member"
)

// syncMembers are the members that run a sync Deployment in the mode under test.
func syncMembers() []string {
	if perMember {
		return members
	}
	return []string{host}
}

// unreachableTimeout is the deployed sync's: how long a stopped member's endpoints stay.
const unreachableTimeout = 20 * time.Second

// deployProduction installs everything as an operator would, from the docs, and checks that no
// kubectl-mcs process runs on the host afterwards.
func deployProduction() error {
	if syncImage == "" || syncArchive == "" || testbedDir == "" {
		return fmt.Errorf("TRAFFIC_SYNC_IMAGE, TRAFFIC_SYNC_ARCHIVE and TESTBED_DIR must be set (run: make test-production)")
	}
	for _, a := range []string{syncArchive, nextArchive} {
		if a == "" {
			continue
		}
		for _, c := range members {
			if err := importImage(c, a); err != nil {
				return err
			}
		}
	}
	all := strings.Join(members, ",")
	if r := mcs("init", "--contexts", all); r.code != 0 {
		return fmt.Errorf("kubectl mcs init: %s", r.stderr)
	}
	// The DNS server first: init --dns refuses while its Service has no ready endpoint.
	for _, c := range members {
		m := mcs("dns-server", "--print-manifests", "--context", c, "--image", syncImage)
		if m.code != 0 {
			return fmt.Errorf("dns-server --print-manifests: %s", m.stderr)
		}
		if r := kubectl([]byte(m.stdout), c, "apply", "--server-side", "-f", "-"); r.code != 0 {
			return fmt.Errorf("%s: applying the DNS server: %s", c, r.stderr)
		}
	}
	for _, c := range members {
		if r := kubectl(nil, c, "-n", systemNS, "rollout", "status", "deployment/"+dnsName, "--timeout=120s"); r.code != 0 {
			return fmt.Errorf("%s: the DNS server's rollout: %s%s", c, r.stdout, r.stderr)
		}
	}
	if r := mcs("init", "--contexts", all, "--dns"); r.code != 0 {
		return fmt.Errorf("kubectl mcs init --dns: %s", r.stderr)
	}
	// install waits for the rollout and for every leader to read every member.
	if r := install(syncImage, perMember); r.code != 0 {
		return fmt.Errorf("kubectl mcs install: %s%s", r.stdout, r.stderr)
	}
	if pids := hostProcesses(); len(pids) > 0 {
		return fmt.Errorf("kubectl-mcs runs on the host (pids %v): the production path must run only pods", pids)
	}
	return nil
}

// installTimeout is install's --timeout here: the rollout of two replicas on the bed's nodes, and
// the new leader's first reads of every member.
const installTimeout = 3 * time.Minute

// install runs `kubectl mcs install` as docs/running-in-a-cluster.md tells an operator to, and
// as it does waits for the rollout and for every leader to read every member: the pods reach
// every other member at the address the bed gives its apiserver on the nodes' segment; in one
// mode or the other (per member: a sync in every member).
func install(image string, perMember bool) result {
	return installAt(image, perMember, nil, installTimeout)
}

// installAt is install with the addresses of servers (by context) instead of the bed's, and
// --timeout=timeout (the run killed a minute after it, for the writes).
func installAt(image string, perMember bool, servers map[string]string, timeout time.Duration) result {
	args := []string{"--kubeconfig", kubeconfig, "install", "--contexts", strings.Join(members, ","), "--image", image,
		"--unreachable-timeout", unreachableTimeout.String(), "--timeout", timeout.String()}
	if perMember {
		args = append(args, "--mode=per-member")
	} else {
		args = append(args, "--context", host)
	}
	for c, url := range apiservers() {
		if s, ok := servers[c]; ok {
			url = s
		}
		if perMember || c != host {
			args = append(args, "--member-server", c+"="+url)
		}
	}
	return runWithin(timeout+time.Minute, nil, binary, args...)
}

// apiservers reads, from node.sh env, the address pods use for each member's apiserver.
func apiservers() map[string]string {
	out, err := exec.Command("bash", testbedScript("node.sh"), "env").Output()
	if err != nil {
		return nil
	}
	urls := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || !strings.HasPrefix(k, "APISERVER_") {
			continue
		}
		urls[strings.TrimPrefix(k, "APISERVER_")] = strings.Trim(v, `'"`)
	}
	return urls
}

// testbedScript is a script of test/testbed (tests run in their package's directory).
func testbedScript(name string) string { return filepath.Join("..", "testbed", name) }

// importImage loads an image archive into a node's containerd, where the kubelet finds it.
func importImage(c, archive string) error {
	sock := filepath.Join(testbedDir, "nodes", c, "containerd.sock")
	out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "import", "--all-platforms", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: importing %s: %v: %s", c, archive, err, out)
	}
	return nil
}

// hostProcesses are the processes running the plugin binary under test outside any container
// against this bed (its kubeconfig in their arguments or environment: other beds on the machine
// may run the same binary).
func hostProcesses() []int {
	bin, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return nil
	}
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if exe, err := os.Readlink(p + "/exe"); err != nil || exe != bin {
			continue
		}
		cmdline, _ := os.ReadFile(p + "/cmdline")
		environ, _ := os.ReadFile(p + "/environ")
		if !strings.Contains(string(cmdline)+string(environ), testbedDir) {
			continue
		}
		var pid int
		fmt.Sscanf(strings.TrimPrefix(p, "/proc/"), "%d", &pid)
		if pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// productionLogs prints what the pods said, for a failed run.
func productionLogs() {
	for _, c := range syncMembers() {
		fmt.Fprintf(os.Stderr, "--- sync pods in %s\n%s\n", c,
			tail(kubectl(nil, c, "-n", systemNS, "logs", "-l", "app.kubernetes.io/name="+syncName, "--tail=60", "--prefix").stdout, 120))
	}
	for _, c := range members {
		r := kubectl(nil, c, "-n", systemNS, "get", "pods", "-o", "wide")
		fmt.Fprintf(os.Stderr, "--- %s: pods of %s\n%s%s\n", c, systemNS, r.stdout, r.stderr)
		fmt.Fprintf(os.Stderr, "--- %s: DNS server logs\n%s\n", c,
			tail(kubectl(nil, c, "-n", systemNS, "logs", "-l", "app.kubernetes.io/name="+dnsName, "--tail=20", "--prefix").stdout, 40))
	}
}
