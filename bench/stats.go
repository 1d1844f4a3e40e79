package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func parallel(workers, n int, f func(int) error) error {
	var mu sync.Mutex
	var errs []error
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func percentile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s))*p/100+0.999999) - 1
	if i < 0 {
		i = 0
	}
	return s[min(i, len(s)-1)]
}

func peakRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// paced calls f(n) for n = from, from+1, ... rate times a second on `workers` goroutines until
// ctx ends or window has passed (0: no window). A tick that finds every worker busy is dropped:
// the achieved rate is what gets reported. It returns once every call has returned, with the
// ticks dropped and the next n.
func paced(ctx context.Context, rate, workers, from int, window time.Duration, f func(n int)) (dropped, next int) {
	var end <-chan time.Time
	if window > 0 {
		end = time.After(window)
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	return pace(ctx, tick.C, end, rate, workers, from, f)
}

// pace is paced on given ticks, until ctx or end: a second's worth (rate) of ticks may wait.
func pace(ctx context.Context, ticks, end <-chan time.Time, rate, workers, from int, f func(n int)) (dropped, next int) {
	jobs := make(chan int, rate)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				f(n)
			}
		}()
	}
	n := from
	for stop := false; !stop; {
		select {
		case <-ctx.Done():
			stop = true
		case <-end:
			stop = true
		case <-ticks:
			select {
			case jobs <- n:
				n++
			default:
				dropped++
			}
		}
	}
	close(jobs)
	wg.Wait()
	return dropped, n
}
