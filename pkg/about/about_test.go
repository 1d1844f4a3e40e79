package about

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCRDMatchesResource(t *testing.T) {
	crd, err := CRD()
	if err != nil {
		t.Fatal(err)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	if crd.GetName() != Resource.Resource+"."+Resource.Group || group != Resource.Group || plural != Resource.Resource || scope != "Cluster" {
		t.Fatalf("CRD %s group %s plural %s scope %s", crd.GetName(), group, plural, scope)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) != 1 || versions[0].(map[string]any)["name"] != Resource.Version {
		t.Fatalf("versions %v", versions)
	}
}

func TestProperty(t *testing.T) {
	p := Property(ClusterIDProperty, "east")
	if v, _, _ := unstructured.NestedString(p.Object, "spec", "value"); v != "east" || p.GetName() != ClusterIDProperty || p.GetLabels()["app.kubernetes.io/managed-by"] != "kubectl-mcs" {
		t.Fatalf("%v", p.Object)
	}
}

func TestCRDIsApproved(t *testing.T) {
	crd, _ := CRD()
	if crd.GetAnnotations()["api-approved.kubernetes.io"] == "" {
		t.Fatal("a *.k8s.io CRD without api-approved.kubernetes.io is refused by the apiserver")
	}
}
