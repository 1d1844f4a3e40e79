package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDerivedServiceName(t *testing.T) {
	if got := DerivedServiceName("serve"); got != "derived-serve" {
		t.Fatalf("got %q", got)
	}
	a := DerivedServiceName(strings.Repeat("a", 63))
	b := DerivedServiceName(strings.Repeat("a", 62) + "b")
	if len(a) != 63 || a == b {
		t.Fatalf("truncated names must be 63 long and distinct: %q %q", a, b)
	}
	for _, n := range []string{a, b, DerivedServiceName(strings.Repeat("x-", 30) + "y")} {
		if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
			t.Errorf("%q is not a DNS-1035 label: %v", n, errs)
		}
	}
}

func TestIsManaged(t *testing.T) {
	if !IsManaged(map[string]string{ManagedByLabel: ManagedByValue}) || !IsManaged(map[string]string{EndpointSliceManagedByLabel: EndpointSliceManagedByValue}) {
		t.Fatal("our labels must count as managed")
	}
	if IsManaged(nil) || IsManaged(map[string]string{ManagedByLabel: "helm"}) || IsManaged(map[string]string{EndpointSliceManagedByLabel: "endpointslice-controller.k8s.io"}) {
		t.Fatal("others' objects must not count as managed")
	}
}
