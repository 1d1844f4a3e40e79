package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// deploymentMemory is the memory request and limit, in MiB, of the Deployment that
// `kubectl mcs install` installs for the bench's clusterset (hosted in its first cluster; a dry
// run, each member at its kubeconfig's loopback address; in per-member mode the first member's
// Deployment): the peak RSS of the sync under test is judged against that limit.
func (b *bench) deploymentMemory() (request, limit float64, err error) {
	raw, err := clientcmd.LoadFromFile(b.kubeconfig)
	if err != nil {
		return 0, 0, err
	}
	// The host's own pods reach it in-cluster; in per-member mode every member is another's.
	others := b.contexts[1:]
	if b.mode == modePerMember {
		others = b.contexts
	}
	var servers []string
	for _, c := range others {
		servers = append(servers, c+"="+raw.Clusters[raw.Contexts[c].Cluster].Server)
	}
	cmd := exec.Command(b.binary, "--kubeconfig", b.kubeconfig, "install", "--contexts", strings.Join(b.contexts, ","),
		"--context", b.contexts[0], "--member-server="+strings.Join(servers, ","), "--mode="+orDefault(string(b.mode), string(modeHost)), "--dry-run=client", "-o", "yaml")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("install --dry-run=client: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return deploymentMemoryOf(out)
}

// deploymentMemoryOf finds the Deployment among the YAML documents and reads its first
// container's memory request and limit.
func deploymentMemoryOf(manifests []byte) (request, limit float64, err error) {
	for _, doc := range bytes.Split(manifests, []byte("\n---")) {
		var d appsv1.Deployment
		if yaml.Unmarshal(doc, &d) != nil || d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		res := d.Spec.Template.Spec.Containers[0].Resources
		mib := func(l corev1.ResourceList) float64 {
			q, ok := l[corev1.ResourceMemory]
			if !ok {
				return 0
			}
			return float64(q.Value()) / (1 << 20)
		}
		return mib(res.Requests), mib(res.Limits), nil
	}
	return 0, 0, fmt.Errorf("install printed no Deployment")
}
