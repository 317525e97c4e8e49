package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// memPath is an in-memory queue standing in for a backend, so the generator's own
// logic (counting, bounds, statistics) can be tested without PostgreSQL.
type memPath struct {
	mu       sync.Mutex
	visible  []string
	inFlight map[string]bool
	next     int
	deleted  int
	calls    map[string]int
}

func newMemPath() *memPath {
	return &memPath{inFlight: map[string]bool{}, calls: map[string]int{}}
}

func (*memPath) Name() string { return "mem" }
func (*memPath) Close()       {}

func (p *memPath) Queue(context.Context, string, bool) (string, error) { return "q", nil }

func (p *memPath) Send(_ context.Context, _ string, bodies, _ []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls["send"]++
	for range bodies {
		p.next++
		p.visible = append(p.visible, strconv.Itoa(p.next))
	}
	return nil
}

func (p *memPath) Receive(_ context.Context, _ string, max int) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls["receive"]++
	n := min(max, len(p.visible))
	hs := p.visible[:n:n]
	p.visible = p.visible[n:]
	for _, h := range hs {
		p.inFlight[h] = true
	}
	return hs, nil
}

func (p *memPath) Delete(_ context.Context, _ string, hs []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls["delete"]++
	for _, h := range hs {
		if !p.inFlight[h] {
			return fmt.Errorf("delete of %s, not in flight", h)
		}
		delete(p.inFlight, h)
		p.deleted++
	}
	return nil
}

func TestClosedLoopCountsDeletedMessages(t *testing.T) {
	p := newMemPath()
	cfg := closedConfig{batch: 10, workers: 4, groups: 1, duration: 50 * time.Millisecond, bodySize: 8}
	r, err := runClosed(context.Background(), p, cfg, "q")
	if err != nil {
		t.Fatal(err)
	}
	if r.msgs == 0 || r.msgs > int64(p.deleted) {
		t.Errorf("counted %d messages, the queue deleted %d", r.msgs, p.deleted)
	}
	if n, first := r.rec.errors(); n != 0 {
		t.Errorf("%d errors, first %s", n, first)
	}
	for _, c := range []string{"send", "receive", "delete"} {
		if r.rec.dist(c).n == 0 {
			t.Errorf("no %s latencies recorded", c)
		}
	}
}

func TestOpenLoopStopsAtCount(t *testing.T) {
	p := newMemPath()
	cfg := openConfig{rate: 10_000, duration: time.Hour, count: 30, bodySize: 8, inFlight: 64}
	r, err := runOpen(context.Background(), p, cfg, "q")
	if err != nil {
		t.Fatal(err)
	}
	if r.issued+r.skipped != 30 {
		t.Errorf("issued %d + skipped %d calls, want 30", r.issued, r.skipped)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// 50 preload sends plus a third of the 30 calls; deletes that found no handle ready
	// became receives.
	if p.calls["send"] != 50+10 {
		t.Errorf("%d sends, want 60", p.calls["send"])
	}
	if p.calls["receive"]+p.calls["delete"] != 20 {
		t.Errorf("%d receives + %d deletes, want 20", p.calls["receive"], p.calls["delete"])
	}
}

// TestOpenLoopWarmupIsNotRecorded: calls scheduled during the warm-up are made but
// neither recorded nor counted against --count.
func TestOpenLoopWarmupIsNotRecorded(t *testing.T) {
	p := newMemPath()
	cfg := openConfig{rate: 10_000, warmup: 5 * time.Millisecond, duration: time.Hour, count: 30, bodySize: 8, inFlight: 64}
	r, err := runOpen(context.Background(), p, cfg, "q")
	if err != nil {
		t.Fatal(err)
	}
	if r.issued+r.skipped != 30 {
		t.Errorf("issued %d + skipped %d calls, want 30", r.issued, r.skipped)
	}
	recorded := 0
	for _, c := range []string{"send", "receive", "delete"} {
		recorded += r.rec.dist(c).n
	}
	if recorded != r.issued {
		t.Errorf("%d latencies recorded for %d measured calls", recorded, r.issued)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	made := p.calls["send"] - 50 + p.calls["receive"] + p.calls["delete"] // less the preload
	if made <= 30 {
		t.Errorf("the path saw %d calls: the warm-up's (50 scheduled) are missing", made)
	}
}

func TestDistAndMedian(t *testing.T) {
	r := newRecorder()
	for i := 1; i <= 100; i++ {
		r.add("x", time.Duration(i)*time.Millisecond, nil)
	}
	r.add("x", 0, fmt.Errorf("boom"))
	d := r.dist("x")
	if d.n != 100 || d.p50 != 51*time.Millisecond || d.p99 != 100*time.Millisecond || d.max != 100*time.Millisecond {
		t.Errorf("dist = %+v", d)
	}
	if n, _ := r.errors(); n != 1 {
		t.Errorf("errors = %d, want 1", n)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
}
