package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// pace numbers the calls from `from`, drops nothing while workers keep up, and drops the ticks
// that find a second's worth (rate) already waiting. Ticks are sent by the test, not a clock, so
// that a loaded machine cannot change the outcome.
func TestPaced(t *testing.T) {
	run := func(ticks int, workers int, f func(int), beforeEnd func()) (dropped, next int) {
		tc, end := make(chan time.Time), make(chan time.Time)
		done := make(chan struct{})
		go func() {
			dropped, next = pace(context.Background(), tc, end, 100, workers, 7, f)
			close(done)
		}()
		for i := 0; i < ticks; i++ {
			tc <- time.Time{}
		}
		beforeEnd()
		end <- time.Time{}
		<-done
		return dropped, next
	}
	var calls atomic.Int64
	dropped, next := run(60, 4, func(int) { calls.Add(1) }, func() {})
	if n := calls.Load(); n != 60 || dropped != 0 || next != 67 {
		t.Errorf("60 ticks on idle workers: %d calls, %d dropped, next %d; want 60, 0, 67", n, dropped, next)
	}
	block := make(chan struct{})
	dropped, next = run(150, 1, func(int) { <-block }, func() { close(block) })
	// One job taken by the blocked worker (or not yet), 100 waiting, the rest dropped; the last
	// tick may be handled once the worker is free again.
	if dropped < 48 || dropped > 50 || next != 7+150-dropped {
		t.Errorf("150 ticks on one blocked worker, 100 may wait: %d dropped, next %d; want 48 to 50, %d", dropped, next, 7+150-dropped)
	}
}
