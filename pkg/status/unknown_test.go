package status

import "testing"

// A table of a subset read says, once, which services it cannot judge and why.
func TestUnknownWarning(t *testing.T) {
	if got := UnknownWarning(Build(seed())); got != "" {
		t.Errorf("the whole clusterset read: %q, want none", got)
	}
	got := UnknownWarning(Build(seed()[1:2]))
	if want := `service demo/serve is Unknown: its imports name "member1" as a source, outside --contexts, whose exports this read cannot know`; got != want {
		t.Errorf("subset read:\n got %q\nwant %q", got, want)
	}
	l := &MultiClusterServiceStatusList{}
	for _, n := range []string{"a", "b", "c", "d"} {
		l.Items = append(l.Items, MultiClusterServiceStatus{Health: Unknown, UnreadExporters: []string{"member4", "member1"}})
		l.Items[len(l.Items)-1].Namespace, l.Items[len(l.Items)-1].Name = "ns", n
	}
	l.Items = append(l.Items, MultiClusterServiceStatus{Health: Healthy})
	if got, want := UnknownWarning(l), `4 services are Unknown (ns/a, ns/b, ns/c, ...): their imports name "member1", "member4" as sources, outside --contexts, whose exports this read cannot know`; got != want {
		t.Errorf("four services:\n got %q\nwant %q", got, want)
	}
}
