package reconciler

import (
	"container/heap"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// fairQueue orders the services waiting to be synced by when each was last taken up, least
// recently first (never taken up: first, in the order added). Under a backlog, FIFO makes a
// change to a quiet service wait behind every service that keeps changing; here it overtakes
// them, while the busy ones, whose changes coalesce as they wait, are served in turn. With no
// backlog the order makes no difference. It is the workqueue's Queue: the workqueue keeps the
// set of dirty and in-flight keys and calls it under its own lock, but Pop records a time
// read again by Push, so it locks too.
type fairQueue struct {
	mu     sync.Mutex
	items  fairHeap
	served map[key]fairStamp // when each key was last popped
	seq    uint64
	pops   uint64
	now    func() time.Time
}

type fairStamp struct {
	at  time.Time
	seq uint64 // breaks ties: the order keys were added, or popped
}

type fairItem struct {
	k key
	fairStamp
}

type fairHeap []fairItem

func (h fairHeap) Len() int { return len(h) }
func (h fairHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h fairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *fairHeap) Push(x any)   { *h = append(*h, x.(fairItem)) }
func (h *fairHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// newQueue is the reconciler's queue: client-go's rate-limited workqueue over a fairQueue.
func newQueue(now func() time.Time) workqueue.TypedRateLimitingInterface[key] {
	return queueOver(newFairQueue(now))
}

// queueOver is client-go's rate-limited workqueue in fq's order.
func queueOver(fq *fairQueue) workqueue.TypedRateLimitingInterface[key] {
	const name = "kubectl-mcs"
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](),
		workqueue.TypedRateLimitingQueueConfig[key]{Name: name, DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(
			workqueue.TypedDelayingQueueConfig[key]{Name: name, Queue: workqueue.NewTypedWithConfig(
				workqueue.TypedQueueConfig[key]{Name: name, Queue: fq})})})
}

func newFairQueue(now func() time.Time) *fairQueue {
	return &fairQueue{served: map[key]fairStamp{}, now: now}
}

// Touch: a key added again while it waits keeps its place.
func (q *fairQueue) Touch(key) {}

func (q *fairQueue) Push(k key) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	st, ok := q.served[k]
	if !ok {
		st = fairStamp{seq: q.seq} // zero time: before any key served
	}
	heap.Push(&q.items, fairItem{k: k, fairStamp: st})
}

func (q *fairQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

func (q *fairQueue) Pop() key {
	q.mu.Lock()
	defer q.mu.Unlock()
	it := heap.Pop(&q.items).(fairItem)
	q.seq++
	q.served[it.k] = fairStamp{at: q.now(), seq: q.seq}
	if q.pops++; q.pops%sweepEvery == 0 {
		q.sweep()
	}
	return it.k
}

// forget drops when k was served: its service is gone from every member (a service that comes
// back ranks with the never-served ones, as after sweep), so that churn leaves nothing behind.
func (q *fairQueue) forget(k key) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.served, k)
}

// sweep forgets the keys served longer than quietAfter ago (now quiet, they rank with the
// never-served ones, first), so that services that went away are not remembered forever.
func (q *fairQueue) sweep() {
	cut := q.now().Add(-quietAfter)
	for k, st := range q.served {
		if st.at.Before(cut) {
			delete(q.served, k)
		}
	}
}

const (
	quietAfter = 10 * time.Minute
	sweepEvery = 4096 // pops
)
