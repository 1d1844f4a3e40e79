package rbac

import (
	"slices"
	"strings"
	"testing"
)

func TestPolicyRulesSplitByScope(t *testing.T) {
	cluster, lease := PolicyRules(SyncRules, Cluster), PolicyRules(SyncRules, LeaseNamespace)
	if len(cluster)+len(lease) != len(SyncRules) {
		t.Fatalf("%d cluster + %d lease rules, want %d", len(cluster), len(lease), len(SyncRules))
	}
	for _, r := range lease {
		if r.APIGroups[0] != "coordination.k8s.io" || r.Resources[0] != "leases" {
			t.Errorf("a Lease-namespace rule is not about Leases: %+v", r)
		}
	}
	for _, r := range cluster {
		if r.Resources[0] == "leases" {
			t.Errorf("Leases granted cluster-wide: %+v", r)
		}
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") {
			t.Errorf("wildcard: %+v", r)
		}
	}
	// get/update of the Lease only by name; create cannot be narrowed by name.
	for _, r := range lease {
		if slices.Contains(r.Verbs, "create") && len(r.ResourceNames) > 0 {
			t.Errorf("create with resourceNames never matches: %+v", r)
		}
		if slices.Contains(r.Verbs, "update") && !slices.Equal(r.ResourceNames, []string{LeaseName}) {
			t.Errorf("update not narrowed to the Lease: %+v", r)
		}
	}
}

func TestPolicyRulesCopies(t *testing.T) {
	rules := []Rule{{Resource: "services", Verbs: []string{"list"}, Scope: Cluster}}
	out := PolicyRules(rules, Cluster)
	out[0].Verbs[0] = "delete"
	if rules[0].Verbs[0] != "list" {
		t.Fatal("PolicyRules shares the rule's verbs")
	}
}

func TestPermissionsAndWithout(t *testing.T) {
	rules := []Rule{
		{Resource: "services", Verbs: []string{"list", "watch"}},
		{Resource: "events", Verbs: []string{"create"}},
	}
	ps := Permissions(rules)
	if want := []Permission{{0, "list"}, {0, "watch"}, {1, "create"}}; !slices.Equal(ps, want) {
		t.Fatalf("Permissions = %v, want %v", ps, want)
	}
	got := Without(rules, Permission{0, "watch"})
	if len(got) != 2 || !slices.Equal(got[0].Verbs, []string{"list"}) || rules[0].Verbs[1] != "watch" {
		t.Fatalf("Without(watch) = %+v (input %+v)", got, rules)
	}
	if got := Without(rules, Permission{1, "create"}); len(got) != 1 || got[0].Resource != "services" {
		t.Fatalf("Without(the only verb) keeps the rule: %+v", got)
	}
	n := 0
	for _, r := range SyncRules {
		n += len(r.Verbs)
	}
	if len(Permissions(SyncRules)) != n {
		t.Fatal("Permissions misses verbs of SyncRules")
	}
}

// The DNS server only reads, everywhere.
func TestDNSServerRulesOnlyRead(t *testing.T) {
	for _, r := range PolicyRules(DNSServerRules, Cluster) {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("the DNS server writes: %+v", r)
			}
		}
	}
	if len(PolicyRules(DNSServerRules, Cluster)) != len(DNSServerRules) {
		t.Error("every DNS server rule is cluster-wide")
	}
}

// A reader identity reads what sync reads and can change nothing, nor read a Secret.
func TestReaderRulesOnlyRead(t *testing.T) {
	read := map[string]bool{}
	for _, r := range PolicyRules(ReaderRules(), Cluster) {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("a reader may %s: %+v", v, r)
			}
		}
		for _, res := range r.Resources {
			if res == "secrets" || res == "*" || strings.Contains(res, "/") || res == "events" || res == "leases" {
				t.Errorf("a reader is granted %q: %+v", res, r)
			}
			if slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
				read[res] = true
			}
		}
	}
	if len(PolicyRules(ReaderRules(), Cluster)) != len(ReaderRules()) {
		t.Error("every reader rule is cluster-wide")
	}
	// Every kind sync's informers list and watch in another member, a reader lists and watches.
	for _, r := range SyncRules {
		if slices.Contains(r.Verbs, "watch") && !r.OwnOnly && !read[r.Resource] {
			t.Errorf("sync watches %s; a reader cannot", r.Resource)
		}
	}
	// Derived, not shared: changing the readers' rules leaves SyncRules alone.
	rr := ReaderRules()
	rr[0].Verbs[0] = "delete"
	if ReaderRules()[0].Verbs[0] == "delete" {
		t.Fatal("ReaderRules shares SyncRules' verbs")
	}
}
