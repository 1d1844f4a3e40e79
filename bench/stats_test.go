package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// paced keeps its rate, numbers the calls from `from`, and drops the ticks that find a second's worth already waiting.
func TestPaced(t *testing.T) {
	var calls atomic.Int64
	dropped, next := paced(context.Background(), 100, 4, 7, 500*time.Millisecond, func(int) { calls.Add(1) })
	if n := calls.Load(); n < 20 || n > 55 || dropped != 0 || next != 7+int(n) {
		t.Errorf("100/s for 0.5 s on idle workers: %d calls, %d dropped, next %d", n, dropped, next)
	}
	block := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	go func() { <-ctx.Done(); close(block) }()
	dropped, _ = paced(ctx, 100, 1, 0, 0, func(int) { <-block })
	if dropped < 20 {
		// A second of ticks waits in the queue; the rest are dropped.
		t.Errorf("one blocked worker for 1.5 s at 100/s: %d ticks dropped, want about 50", dropped)
	}
}
