package postgres

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestBatcherMerges holds one call's statement in flight, lets eight more calls on the
// queue arrive, and checks that they run as one statement and that each call gets the
// results of its own entries.
func TestBatcherMerges(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var runs [][]int
	b := newBatcher(100, func(int) int { return 1 }, func(_ context.Context, q string, entries []int) ([]int, error) {
		mu.Lock()
		runs = append(runs, slices.Clone(entries))
		first := len(runs) == 1
		mu.Unlock()
		if first {
			<-release
		}
		out := make([]int, len(entries))
		for i, e := range entries {
			out[i] = -e
		}
		return out, nil
	})
	ctx := context.Background()
	done := make(chan error, 9)
	call := func(entries ...int) {
		res, err := b.do(ctx, "q", entries)
		for i, e := range entries {
			if err == nil && res[i] != -e {
				err = errors.New("a call got another call's results")
			}
		}
		done <- err
	}
	go call(0)
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return q != nil })
	for i := 1; i <= 8; i++ {
		go call(10*i, 10*i+1)
	}
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return len(q.waiting) == 1 && len(q.waiting[0].entries) == 16 })
	close(release)
	for i := 0; i < 9; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(runs) != 2 || len(runs[1]) != 16 {
		t.Fatalf("statements %v, want the first call alone, then the other eight merged", runs)
	}
	if _, busy := b.queues["q"]; busy {
		t.Fatal("queue still marked busy after the last statement")
	}
}

// TestBatcherBoundsStatements: calls beyond max weight go to the next statement, and a
// failed statement fails every call in it.
func TestBatcherBoundsStatements(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var runs []int
	b := newBatcher(4, func(int) int { return 1 }, func(_ context.Context, q string, entries []int) ([]int, error) {
		mu.Lock()
		runs = append(runs, len(entries))
		first := len(runs) == 1
		mu.Unlock()
		if first {
			<-release
		}
		return nil, errors.New("boom")
	})
	done := make(chan error, 4)
	call := func(n int) {
		_, err := b.do(context.Background(), "q", make([]int, n))
		done <- err
	}
	go call(1)
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return q != nil })
	go call(3)
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return len(q.waiting) == 1 })
	go call(2)
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return len(q.waiting) == 2 })
	close(release)
	for i := 0; i < 3; i++ {
		if err := <-done; err == nil || err.Error() != "boom" {
			t.Fatalf("call returned %v, want the statement's error", err)
		}
	}
	if !slices.Equal(runs, []int{1, 3, 2}) {
		t.Fatalf("statement sizes %v, want [1 3 2]", runs)
	}
}

// waitFor yields until cond holds for the batcher's state of queue "q".
func waitFor(t *testing.T, b *batcher[int, int], cond func(*batchQueue[int, int]) bool) {
	t.Helper()
	for {
		b.mu.Lock()
		ok := cond(b.queues["q"])
		b.mu.Unlock()
		if ok {
			return
		}
		runtime.Gosched()
	}
}

// TestBatcherSurvivesPanic: a statement that panics fails the calls merged into it and
// leaves the queue usable.
func TestBatcherSurvivesPanic(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	calls := 0
	b := newBatcher(100, func(int) int { return 1 }, func(_ context.Context, q string, entries []int) ([]int, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			<-release
		}
		if n == 2 {
			panic("boom")
		}
		return entries, nil
	})
	first := make(chan error, 1)
	go func() { _, err := b.do(context.Background(), "q", []int{1}); first <- err }()
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return q != nil })
	leader := make(chan any, 1)
	go func() {
		defer func() { leader <- recover() }()
		_, _ = b.do(context.Background(), "q", []int{2})
	}()
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return len(q.waiting) == 1 })
	other := make(chan error, 1)
	go func() { _, err := b.do(context.Background(), "q", []int{3}); other <- err }()
	waitFor(t, b, func(q *batchQueue[int, int]) bool { return len(q.waiting) == 1 && len(q.waiting[0].entries) == 2 })
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if p := <-leader; p != "boom" {
		t.Fatalf("leader recovered %v, want the panic", p)
	}
	if err := <-other; err == nil {
		t.Fatal("a call merged into a panicking statement succeeded")
	}
	if res, err := b.do(context.Background(), "q", []int{4}); err != nil || len(res) != 1 || res[0] != 4 {
		t.Fatalf("after the panic: %v, %v", res, err)
	}
}
