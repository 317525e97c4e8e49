package main

import (
	"context"
	"os"
	"sync"
	"testing"
)

// countingPath counts the messages sent to it and the largest batch.
type countingPath struct {
	mu       sync.Mutex
	sent     int
	maxBatch int
}

func (*countingPath) Name() string { return "counting" }
func (*countingPath) Queue(context.Context, string, bool) (string, error) {
	return "q", nil
}
func (p *countingPath) Send(_ context.Context, _ string, bodies, _ []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent += len(bodies)
	p.maxBatch = max(p.maxBatch, len(bodies))
	return nil
}
func (*countingPath) Receive(context.Context, string, int) ([]string, error) { return nil, nil }
func (*countingPath) Delete(context.Context, string, []string) error         { return nil }
func (*countingPath) Close()                                                 {}

func TestFillSendsExactly(t *testing.T) {
	for _, n := range []int{1, 10, 95, 1003} {
		p := &countingPath{}
		if err := fill(context.Background(), p, "q", n, 7, 10); err != nil {
			t.Fatal(err)
		}
		if p.sent != n || p.maxBatch > 10 {
			t.Errorf("fill %d: sent %d, largest batch %d", n, p.sent, p.maxBatch)
		}
	}
}

func TestRSSOfThisProcess(t *testing.T) {
	m, err := rss(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if m.rss <= 0 || m.hwm < m.rss {
		t.Fatalf("rss %.1f MiB, peak %.1f MiB", m.rss, m.hwm)
	}
}
