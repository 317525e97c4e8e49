package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

func TestQueueCacheExpiryAndInvalidation(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := newQueueCache(time.Second)
	_, ok, gen := c.get("q", now)
	if ok {
		t.Fatal("hit on an empty cache")
	}
	c.put(drivers.Queue{Name: "q"}, gen, now)
	if _, ok, _ := c.get("q", now.Add(999*time.Millisecond)); !ok {
		t.Fatal("miss within the TTL")
	}
	if _, ok, _ := c.get("q", now.Add(time.Second)); ok {
		t.Fatal("hit at the TTL")
	}
	if c.len() != 0 {
		t.Fatalf("expired entry kept: %d entries", c.len())
	}

	// A fill that read the backend before an invalidation must not store what it read.
	_, _, gen = c.get("q", now)
	c.invalidate("q")
	c.put(drivers.Queue{Name: "q"}, gen, now)
	if _, ok, _ := c.get("q", now); ok {
		t.Fatal("a fill older than an invalidation was stored")
	}
}

func TestQueueCacheBounded(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := newQueueCache(time.Second)
	for i := range queueCacheMaxEntries + 10 {
		_, _, gen := c.get("x", now)
		c.put(drivers.Queue{Name: fmt.Sprint(i)}, gen, now)
	}
	if c.len() != queueCacheMaxEntries {
		t.Fatalf("%d entries, want the bound %d", c.len(), queueCacheMaxEntries)
	}
	// Once they have expired, a new entry makes room by dropping them.
	later := now.Add(time.Second)
	_, _, gen := c.get("new", later)
	c.put(drivers.Queue{Name: "new"}, gen, later)
	if c.len() != 1 {
		t.Fatalf("%d entries after expiry, want 1", c.len())
	}
}

func TestQueueCacheDisabledStoresNothing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := newQueueCache(-1)
	_, _, gen := c.get("q", now)
	c.put(drivers.Queue{Name: "q"}, gen, now)
	if _, ok, _ := c.get("q", now); ok || c.len() != 0 {
		t.Fatal("a disabled cache stored an entry")
	}
}
