package karmada

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePorts(t *testing.T) {
	got, err := ParsePorts([]string{"http:80", "grpc:9090", "8080"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Port{{"http", 80}, {"grpc", 9090}, {"", 8080}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for in, msg := range map[string]string{"http:0": "out of range", "http:65536": "out of range", "http:x": "not a number"} {
		if _, err := ParsePorts([]string{in}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParsePorts(%q) error = %v, want %q", in, err, msg)
		}
	}
}

func TestMCSSpecValidate(t *testing.T) {
	ok := MCSSpec{Namespace: "demo", Name: "serve", Types: []string{TypeCrossCluster}, Ports: []Port{{"http", 80}}, Providers: []string{"member1"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec rejected: %v", err)
	}
	bad := map[string]func(*MCSSpec){
		"DNS-1035":        func(s *MCSSpec) { s.Name = "1serve" },
		"at least one":    func(s *MCSSpec) { s.Types = nil },
		"must be":         func(s *MCSSpec) { s.Types = []string{"NodePort"} },
		"given twice":     func(s *MCSSpec) { s.Types = []string{TypeCrossCluster, TypeCrossCluster} },
		"used twice":      func(s *MCSSpec) { s.Ports = []Port{{"http", 80}, {"http", 81}} },
		"out of range":    func(s *MCSSpec) { s.Ports = []Port{{"http", 70000}} },
		"port name":       func(s *MCSSpec) { s.Ports = []Port{{"HTTP_", 80}} },
		"is not valid":    func(s *MCSSpec) { s.Consumers = []string{"Member_2"} },
		"is listed twice": func(s *MCSSpec) { s.Providers = []string{"m", "m"} },
		// Karmada's cluster names stop at 48 characters (karmada-webhook refuses longer ones).
		"no more than 48": func(s *MCSSpec) { s.Consumers = []string{strings.Repeat("m", 49)} },
	}
	long := ok
	long.Consumers = []string{strings.Repeat("m", 48)}
	if err := long.Validate(); err != nil {
		t.Errorf("48-character cluster name rejected: %v", err)
	}
	for msg, mutate := range bad {
		s := ok
		mutate(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: Validate() = %v, want error containing %q", msg, err, msg)
		}
	}
}

func TestMultiClusterServiceObject(t *testing.T) {
	s := MCSSpec{Namespace: "demo", Name: "serve", Types: []string{TypeCrossCluster}, Ports: []Port{{"http", 80}}, Providers: []string{"member1"}, Consumers: []string{"member2"}}
	u := s.MultiClusterService()
	if u.GetAPIVersion() != "networking.karmada.io/v1alpha1" || u.GetKind() != "MultiClusterService" {
		t.Fatalf("wrong type %s %s", u.GetAPIVersion(), u.GetKind())
	}
	if u.GetLabels()["app.kubernetes.io/managed-by"] != "kubectl-mcs" {
		t.Fatalf("missing managed-by label: %v", u.GetLabels())
	}
	spec := u.Object["spec"].(map[string]any)
	want := map[string]any{
		"types":            []any{"CrossCluster"},
		"ports":            []any{map[string]any{"name": "http", "port": int64(80)}},
		"providerClusters": []any{map[string]any{"name": "member1"}},
		"consumerClusters": []any{map[string]any{"name": "member2"}},
	}
	if !reflect.DeepEqual(spec, want) {
		t.Fatalf("spec = %#v\nwant %#v", spec, want)
	}
}

func TestPolicyName(t *testing.T) {
	if got := PolicyName("serve", "export"); got != "serve-export-policy" {
		t.Fatalf("got %q", got)
	}
	long := strings.Repeat("a", 250)
	if got := PolicyName(long, "export"); len(got) > 253 || PolicyName(long, "import") == got {
		t.Fatalf("long names must be truncated and stay distinct: %q", got)
	}
}

func TestUnknownClusters(t *testing.T) {
	got := UnknownClusters([]string{"member1", "member9", "member2", "x"}, []string{"member2", "member1", "member3"})
	if strings.Join(got, ",") != "member9,x" {
		t.Errorf("UnknownClusters = %v", got)
	}
	if got := UnknownClusters(nil, []string{"member1"}); len(got) != 0 {
		t.Errorf("UnknownClusters(nil) = %v", got)
	}
}
