package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// recorder collects call latencies and errors by call type.
type recorder struct {
	mu       sync.Mutex
	lat      map[string][]time.Duration
	errs     map[string]int
	firstErr map[string]string
}

func newRecorder() *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errs: map[string]int{}, firstErr: map[string]string{}}
}

func (r *recorder) add(call string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs[call]++
		if r.firstErr[call] == "" {
			r.firstErr[call] = err.Error()
		}
		return
	}
	r.lat[call] = append(r.lat[call], d)
}

// dist is a latency distribution summary.
type dist struct {
	n             int
	p50, p99, max time.Duration
}

func (r *recorder) dist(call string) dist {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := slices.Clone(r.lat[call])
	if len(l) == 0 {
		return dist{}
	}
	slices.Sort(l)
	at := func(q float64) time.Duration { return l[min(len(l)-1, int(q*float64(len(l))))] }
	return dist{n: len(l), p50: at(0.50), p99: at(0.99), max: l[len(l)-1]}
}

func (r *recorder) errors() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, first := 0, ""
	for c, k := range r.errs {
		n += k
		if first == "" {
			first = c + ": " + r.firstErr[c]
		}
	}
	return n, first
}

// ms renders a duration in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
