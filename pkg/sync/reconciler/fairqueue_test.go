package reconciler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func svcKey(n string) key { return types.NamespacedName{Namespace: "ns", Name: n} }

// take gets the next key from the queue and marks it done.
func take(t *testing.T, q interface {
	Get() (key, bool)
	Done(key)
}) string {
	t.Helper()
	k, quit := q.Get()
	if quit {
		t.Fatal("queue shut down")
	}
	q.Done(k)
	return k.Name
}

func TestFairQueueServesQuietServicesBeforeBusyOnes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newQueue(func() time.Time { return now })
	defer q.ShutDown()

	// Never served: in the order added.
	for _, n := range []string{"quiet", "hot1", "hot2"} {
		q.Add(svcKey(n))
	}
	for _, want := range []string{"quiet", "hot1", "hot2"} {
		now = now.Add(time.Second)
		if got := take(t, q); got != want {
			t.Fatalf("cold queue: got %s, want %s", got, want)
		}
	}
	// hot1 and hot2 keep changing; then quiet changes once, behind them.
	for i := 0; i < 3; i++ {
		q.Add(svcKey("hot1"))
		q.Add(svcKey("hot2"))
		now = now.Add(time.Second)
		take(t, q)
		take(t, q)
	}
	q.Add(svcKey("hot1"))
	q.Add(svcKey("hot2"))
	q.Add(svcKey("quiet"))
	q.Add(svcKey("new"))
	var got []string
	for i := 0; i < 4; i++ {
		now = now.Add(time.Second)
		got = append(got, take(t, q))
	}
	// new was never served, quiet long ago; the busy ones in turn, least recently served first.
	want := []string{"new", "quiet", "hot1", "hot2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order under churn: got %v, want %v", got, want)
		}
	}
}

func TestFairQueueAddedAgainWhileWaitingKeepsOnePlace(t *testing.T) {
	q := newQueue(time.Now)
	defer q.ShutDown()
	q.Add(svcKey("a"))
	q.Add(svcKey("b"))
	q.Add(svcKey("a"))
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (a added twice while waiting is one item)", q.Len())
	}
	if a, b := take(t, q), take(t, q); a != "a" || b != "b" {
		t.Fatalf("got %s, %s; want a, b", a, b)
	}
}

func TestFairQueueForgetsServicesQuietForLong(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fq := newFairQueue(func() time.Time { return now })
	for i := 0; i < sweepEvery; i++ {
		fq.Push(svcKey("gone"))
		fq.Pop()
		if i == 0 {
			now = now.Add(quietAfter + time.Minute)
		}
	}
	// The sweep ran at the last pop: "gone" was served just now, so it is remembered.
	if _, ok := fq.served[svcKey("gone")]; !ok {
		t.Fatal("a service served just now was forgotten")
	}
	fq.Push(svcKey("old"))
	fq.Pop()
	now = now.Add(quietAfter + time.Minute)
	fq.pops = sweepEvery - 1
	fq.Push(svcKey("gone"))
	fq.Pop() // sweeps: "old" was served more than quietAfter ago
	if _, ok := fq.served[svcKey("old")]; ok {
		t.Fatalf("a service quiet for longer than %v is still remembered (%d remembered)", quietAfter, len(fq.served))
	}
}
