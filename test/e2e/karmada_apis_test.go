//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

var (
	clusterGVR = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
	rbGVR      = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
)

// clusterCRD stands in for karmada-aggregated-apiserver's Cluster API on the stand-in control
// plane: the test writes each Cluster's status itself, as Karmada's cluster status controller would.
const clusterCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusters.cluster.karmada.io}
spec:
  group: cluster.karmada.io
  scope: Cluster
  names: {plural: clusters, singular: cluster, kind: Cluster, listKind: ClusterList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// memberCluster writes Cluster NAME whose status lists kinds ("GROUPVERSION KIND"), complete.
func memberCluster(t *testing.T, name string, kinds ...string) {
	t.Helper()
	ctx := context.Background()
	res := clients[karmadaCtx].dyn.Resource(clusterGVR)
	u, err := res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"syncMode": "Push"}}}
		u, err = res.Create(ctx, u, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("cluster %s: %v", name, err)
	}
	byGV := map[string][]any{}
	for _, k := range kinds {
		gv, kind, _ := strings.Cut(k, " ")
		byGV[gv] = append(byGV[gv], map[string]any{"name": strings.ToLower(kind) + "s", "kind": kind})
	}
	var ens []any
	for gv, rs := range byGV {
		ens = append(ens, map[string]any{"groupVersion": gv, "resources": rs})
	}
	st := map[string]any{}
	if len(ens) > 0 {
		st["apiEnablements"] = ens
		st["conditions"] = []any{map[string]any{"type": "CompleteAPIEnablements", "status": "True", "reason": "Complete",
			"message": "collected complete APIEnablements from the cluster", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
	}
	u.Object["status"] = st
	if _, err := res.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cluster %s status: %v", name, err)
	}
}

// karmadaObjects lists the objects expose can write in ns of the control plane, with their
// resourceVersions.
func karmadaObjects(t *testing.T, ns string) []string {
	t.Helper()
	var out []string
	for _, gvr := range []schema.GroupVersionResource{mcsGVR, ppGVR, seGVR("v1alpha1"), siGVR("v1alpha1")} {
		l, err := clients[karmadaCtx].dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range l.Items {
			out = append(out, gvr.Resource+"/"+u.GetName()+"@"+u.GetResourceVersion())
		}
	}
	sort.Strings(out)
	return out
}

// TestKarmadaMembersWithoutTheAPI: Karmada's scheduler never places an object in a member whose
// Cluster does not list its API, so expose refuses such a provider or consumer, naming it and the
// group/version, and writes nothing; --force writes; with the API listed it goes through; a
// member whose APIs are not collected is a warning. status shows a binding Karmada did not
// schedule, with its reason.
func TestKarmadaMembersWithoutTheAPI(t *testing.T) {
	needKarmada(t)
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(clusterCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[karmadaCtx].dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Without the Cluster API, expose checks no member: the other stand-in tests name members
		// that have no Cluster here.
		_ = clients[karmadaCtx].dyn.Resource(crdGVR).Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{})
		waitFor(t, "the Cluster CRD gone", func() bool {
			_, err := clients[karmadaCtx].dyn.Resource(crdGVR).Get(context.Background(), crd.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
	if out, err := runKubectl(karmadaCtx, "wait", "--for=condition=Established", "--timeout=60s", "crd/clusters.cluster.karmada.io"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	core := []string{"v1 Service", "apps/v1 Deployment", "discovery.k8s.io/v1 EndpointSlice"}
	withMCS := append([]string{"multicluster.x-k8s.io/v1alpha1 ServiceExport", "multicluster.x-k8s.io/v1alpha1 ServiceImport"}, core...)
	memberCluster(t, "kbm", core...)
	memberCluster(t, "kbn", append([]string{"multicluster.x-k8s.io/v1beta1 ServiceImport"}, core...)...) // v1beta1 only
	memberCluster(t, "kbfresh")                                                                          // just joined: nothing collected

	ns := namespace(t, "e2e-karmada-apis", karmadaCtx)
	service(t, karmadaCtx, ns, "web")
	expose := []string{"expose", "web", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers", "kbm", "--consumers", "kbn", "--propagate"}

	before := karmadaObjects(t, ns)
	r := mcs(expose...)
	if r.code == 0 {
		t.Fatalf("expose toward members without the mcs-api CRDs succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{"nothing written", `member cluster "kbm" does not serve multicluster.x-k8s.io/v1alpha1 ServiceExport`,
		`member cluster "kbn" does not serve multicluster.x-k8s.io/v1alpha1 ServiceImport`, "kubectl mcs init --contexts=kbm,kbn", "--force writes anyway"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	t.Logf("refusal:\n%s", r.stderr)
	if after := karmadaObjects(t, ns); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("refused, yet the control plane changed: before %v, after %v", before, after)
	}

	// --force: written, each member named in a warning.
	r = mustMCS(t, append(expose, "--force")...)
	if !strings.Contains(r.stderr, `Warning: member cluster "kbm" does not serve`) || !strings.Contains(r.stderr, "written anyway (--force)") {
		t.Errorf("--force warnings:\n%s", r.stderr)
	}
	if get(t, karmadaCtx, seGVR("v1alpha1"), ns, "web") == nil || get(t, karmadaCtx, siGVR("v1alpha1"), ns, "web") == nil || len(karmadaObjects(t, ns)) != 5 {
		t.Fatalf("--force wrote %v", karmadaObjects(t, ns))
	}

	// What Karmada's scheduler then says of the export's binding: status shows it, with the reason.
	const noFit = "0/3 clusters are available: 1 cluster(s) did not have the API resource, 2 cluster(s) did not match the placement cluster affinity constraint."
	rb := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
		"metadata": map[string]any{"name": "web-serviceexport", "namespace": ns},
		"spec":     map[string]any{"resource": map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport", "namespace": ns, "name": "web"}}}}
	rb, err := clients[karmadaCtx].dyn.Resource(rbGVR).Namespace(ns).Create(ctx, rb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Scheduled", "status": "False", "reason": "NoClusterFit",
		"message": noFit, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := clients[karmadaCtx].dyn.Resource(rbGVR).Namespace(ns).UpdateStatus(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx)
	// The bindings' own table, after the objects'.
	if f := row(t, r.stdout, "web-serviceexport", ns); strings.Join(f, " ") != "web-serviceexport "+ns+" ServiceExport/web False NoClusterFit" ||
		!strings.Contains(r.stdout, "RESOURCEBINDING") {
		t.Errorf("status table:\n%s", r.stdout)
	}
	if f := row(t, r.stdout, ns, "web"); f[0] != "ServiceExport" || f[3] != "Degraded" {
		t.Errorf("the export is not Degraded:\n%s", r.stdout)
	}
	r = mustMCS(t, "status", "-n", ns, "--karmada-context", karmadaCtx, "-o", "json")
	var l status.KarmadaServiceStatusList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.ResourceBindings) != 1 || l.ResourceBindings[0].Message != noFit || l.ResourceBindings[0].Service != "web" ||
		!strings.Contains(strings.Join(l.ServiceExports[0].Problems, " "), "ResourceBinding web-serviceexport is Scheduled=False (NoClusterFit)") {
		t.Errorf("status json: %+v", l)
	}
	r = mustMCS(t, "status", "web", "-n", ns, "--karmada-context", karmadaCtx)
	if !strings.Contains(r.stdout, "ResourceBinding:     "+ns+"/web-serviceexport") || !strings.Contains(r.stdout, "did not have the") {
		t.Errorf("describe:\n%s", r.stdout)
	}
	mustMCS(t, "unexpose", "web", "-n", ns, "--karmada-context", karmadaCtx)

	// Once the members serve the API (kubectl mcs init, seen by Karmada), expose goes through.
	memberCluster(t, "kbm", withMCS...)
	memberCluster(t, "kbn", withMCS...)
	r = mustMCS(t, expose...)
	if strings.Contains(r.stderr, "Warning") {
		t.Errorf("warnings with every API served:\n%s", r.stderr)
	}
	if n := len(karmadaObjects(t, ns)); n != 5 {
		t.Errorf("%d objects written, want 5", n)
	}

	// A member whose APIs Karmada has not collected yet: a warning, not a refusal.
	r = mustMCS(t, "expose", "web", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers", "kbm", "--consumers", "kbfresh")
	if !strings.Contains(r.stderr, `Warning: member cluster "kbfresh": Karmada has not collected the APIs it serves yet (its Cluster lists none); it places multicluster.x-k8s.io/v1alpha1 ServiceImport there`) {
		t.Errorf("not collected:\n%s", r.stderr)
	}
	// A MultiClusterService sends only Services and EndpointSlices to the members.
	memberCluster(t, "kbm", "v1 Service")
	r = mcs("expose", "web", "-n", ns, "--karmada-context", karmadaCtx, "--providers", "kbm", "--consumers", "kbn")
	if r.code == 0 || !strings.Contains(r.stderr, `member cluster "kbm" does not serve discovery.k8s.io/v1 EndpointSlice`) {
		t.Errorf("MultiClusterService toward a member without EndpointSlices: exit %d\n%s", r.code, r.stderr)
	}
	if get(t, karmadaCtx, mcsGVR, ns, "web") != nil {
		t.Errorf("refused, yet the MultiClusterService was written")
	}
}
