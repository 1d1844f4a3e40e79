//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestKarmadaStandInServesBundledCRDs: the stand-in serves the mcs-api CRDs Karmada bundles
// (v1alpha1 only, ServiceExport without spec), not the plugin's, as a real Karmada does.
func TestKarmadaStandInServesBundledCRDs(t *testing.T) {
	needKarmada(t)
	for _, name := range []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"} {
		crd, err := clients[karmadaCtx].dyn.Resource(crdGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if crd.GetLabels()[managedBy] == "kubectl-mcs" {
			t.Errorf("%s on the stand-in is the plugin's", name)
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if len(versions) != 1 || versions[0].(map[string]any)["name"] != "v1alpha1" {
			t.Errorf("%s serves %d versions, want v1alpha1 only", name, len(versions))
		}
	}
	crd, _ := clients[karmadaCtx].dyn.Resource(crdGVR).Get(context.Background(), "serviceexports.multicluster.x-k8s.io", metav1.GetOptions{})
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if _, ok, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec"); ok {
		t.Error("the stand-in's ServiceExport declares a spec: not Karmada's bundled CRD")
	}
}

// TestKarmadaServiceExportBundledCRDs: the guide's flow in one command, against Karmada's
// bundled mcs-api CRDs, with and without --workload; every object passes strict validation.
func TestKarmadaServiceExportBundledCRDs(t *testing.T) {
	needKarmada(t)
	for name, extra := range map[string][]string{"service": nil, "workload": {"--workload=deployment/serve"}} {
		t.Run(name, func(t *testing.T) {
			ns := namespace(t, "e2e-karmada-se", karmadaCtx)
			service(t, karmadaCtx, ns, "serve")
			if out, err := runKubectl(karmadaCtx, "-n", ns, "create", "deployment", "serve", "--image=jeremyot/serve:0a40de8"); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			flags := append([]string{"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport",
				"--providers=member1", "--consumers=member2", "--propagate"}, extra...)

			// What expose would write, fed to the apiserver by the test itself with strict validation.
			r := mustMCS(t, append(flags, "--dry-run=client", "-o", "json")...)
			var list struct {
				Items []map[string]any `json:"items"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Items) != 5 {
				t.Fatalf("want 5 objects (export, import, 3 policies): %v\n%s", err, r.stdout)
			}
			for _, item := range list.Items {
				u := &unstructured.Unstructured{Object: item}
				if _, err := clients[karmadaCtx].dyn.Resource(gvrOf(t, u)).Namespace(ns).Create(context.Background(), u,
					metav1.CreateOptions{FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("%s rejected by Karmada's bundled schema: %v", u.GetKind(), err)
				}
			}

			mustMCS(t, flags...)
			se := get(t, karmadaCtx, seGVR("v1alpha1"), ns, "serve")
			if se == nil || se.GetLabels()[managedBy] != "kubectl-mcs" {
				t.Fatalf("ServiceExport not written: %v", se)
			}
			if _, ok := se.Object["spec"]; ok {
				t.Errorf("ServiceExport has a spec on a spec-less schema: %v", se.Object["spec"])
			}
			si := get(t, karmadaCtx, siGVR("v1alpha1"), ns, "serve")
			if si == nil {
				t.Fatal("ServiceImport not written")
			}
			if typ, _, _ := unstructured.NestedString(si.Object, "spec", "type"); typ != "ClusterSetIP" {
				t.Errorf("ServiceImport type %q", typ)
			}
			if ports, _, _ := unstructured.NestedSlice(si.Object, "spec", "ports"); len(ports) != 1 {
				t.Errorf("ServiceImport ports %v", ports)
			}
			wl := get(t, karmadaCtx, ppGVR, ns, "serve-workload-policy")
			sel, _, _ := unstructured.NestedSlice(wl.Object, "spec", "resourceSelectors")
			if want := 1 + len(extra); len(sel) != want {
				t.Errorf("workload policy selects %d objects, want %d: %v", len(sel), want, sel)
			}

			// Again: nothing changes.
			rv := se.GetResourceVersion()
			mustMCS(t, flags...)
			if got := get(t, karmadaCtx, seGVR("v1alpha1"), ns, "serve").GetResourceVersion(); got != rv {
				t.Errorf("second expose rewrote the ServiceExport (%s -> %s)", rv, got)
			}
			mustMCS(t, "unexpose", "serve", "-n", ns, "--karmada-context", karmadaCtx)
			for _, gvr := range []schema.GroupVersionResource{seGVR("v1alpha1"), siGVR("v1alpha1"), ppGVR} {
				if n := count(t, gvr, ns, karmadaCtx); n != 0 {
					t.Errorf("%d %s left after unexpose", n, gvr.Resource)
				}
			}
		})
	}
}

// TestExportedFieldsRefusedBySchema: exported labels or annotations where the served
// ServiceExport schema cannot hold them fail with one line naming the cluster, before any write,
// on the Karmada control plane and on a direct member alike.
func TestExportedFieldsRefusedBySchema(t *testing.T) {
	needKarmada(t)
	ns := namespace(t, "e2e-exported", karmadaCtx, "member1")
	service(t, karmadaCtx, ns, "serve")
	service(t, "member1", ns, "serve")
	for _, flag := range []string{"--exported-labels=tier=web", "--exported-annotations=team=a"} {
		field := map[bool]string{true: "spec.exportedLabels", false: "spec.exportedAnnotations"}[strings.Contains(flag, "labels")]
		for name, args := range map[string][]string{
			"karmada": {"expose", "serve", "-n", ns, "--karmada-context", karmadaCtx, "--api=serviceexport", "--providers=member1", "--consumers=member2", "--propagate", flag},
			// The stand-in as a member of a direct clusterset: a cluster with the v0.1.0 CRDs.
			"direct": {"expose", "serve", "-n", ns, "--contexts", "member1," + karmadaCtx, flag},
		} {
			r := mcs(args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, `cluster "karmada"`) ||
				!strings.Contains(r.stderr, strings.SplitN(flag, "=", 2)[0]) || !strings.Contains(r.stderr, field) {
				t.Errorf("%s %s: exit %d, stderr %q", name, flag, r.code, r.stderr)
			}
		}
	}
	for _, gvr := range []schema.GroupVersionResource{seGVR("v1alpha1"), siGVR("v1alpha1"), ppGVR} {
		if n := count(t, gvr, ns, karmadaCtx); n != 0 {
			t.Errorf("a refused expose wrote %d %s on the control plane", n, gvr.Resource)
		}
	}
	if n := count(t, seGVR("v1beta1"), ns, "member1"); n != 0 {
		t.Errorf("a refused expose wrote %d ServiceExports in member1", n)
	}

	// Without them, each member gets what its schema holds: member1 (the plugin's CRDs) a spec,
	// the v0.1.0 cluster none.
	mustMCS(t, "expose", "serve", "-n", ns, "--contexts", "member1,"+karmadaCtx)
	if se := get(t, karmadaCtx, seGVR("v1alpha1"), ns, "serve"); se == nil || se.Object["spec"] != nil {
		t.Errorf("v0.1.0 member: ServiceExport %v", se)
	}
	if se := get(t, "member1", seGVR("v1beta1"), ns, "serve"); se == nil {
		t.Error("member1: no ServiceExport")
	}
	mustMCS(t, "unexpose", "serve", "-n", ns, "--contexts", "member1,"+karmadaCtx)
}
