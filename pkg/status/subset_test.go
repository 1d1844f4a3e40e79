package status

import (
	"reflect"
	"strings"
	"testing"
)

// status --contexts=member2: member1 exports the service, but is not read. member2's import and
// copies name it: what cannot be known is said, and nothing is called left over.
func TestSubsetReadSaysWhatItCannotKnow(t *testing.T) {
	for _, cs := range [][]int{{1}, {1, 2}} {
		all := seed()
		read := all[:0:0]
		for _, i := range cs {
			read = append(read, all[i])
		}
		it := only(t, Build(read))
		want := `No cluster of this read exports it; its imports name "member1" as a source, outside this read (--contexts): whether it still exports it cannot be known here.`
		if it.Health != Unknown || !reflect.DeepEqual(it.Problems, []string{want}) || !reflect.DeepEqual(it.UnreadExporters, []string{"member1"}) {
			t.Errorf("%d clusters: health %s, problems %q, unread exporters %v", len(read), it.Health, it.Problems, it.UnreadExporters)
		}
		if hasProblem(it, "left over") {
			t.Errorf("problems %q call the imports left over", it.Problems)
		}
	}

	// The whole clusterset read: member1's export is seen, nothing is outside.
	if it := only(t, Build(seed())); it.Health != Healthy || len(it.UnreadExporters) != 0 {
		t.Errorf("whole clusterset: health %s, unread exporters %v", it.Health, it.UnreadExporters)
	}
	// Really left over: member1 read, and its export gone.
	cs := seed()
	cs[0].ServiceExports = nil
	if it := only(t, Build(cs)); it.Health != Degraded || !hasProblem(it, "left over") {
		t.Errorf("left over: health %s, problems %q", it.Health, it.Problems)
	}
	// Exported in the read as well: the description names the source it could not check.
	read := seed()[1:]
	read[0].ServiceExports = append(read[0].ServiceExports, export("demo", "serve", 2))
	read[0].Services = append(read[0].Services, service("demo", "serve", false))
	l := Build(read)
	var b strings.Builder
	if err := Describe(&b, l, only(t, l), PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if it := only(t, l); it.Health == Unknown || !reflect.DeepEqual(it.UnreadExporters, []string{"member1"}) ||
		!strings.Contains(b.String(), "Not read:       member1 (a source named by the imports, outside --contexts)") {
		t.Errorf("health %s, unread exporters %v, description:\n%s", it.Health, it.UnreadExporters, b.String())
	}
}
