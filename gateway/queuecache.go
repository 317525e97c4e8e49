package gateway

import (
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// defaultQueueCacheTTL is how long a queue's metadata read for a message operation is
// reused. SQS itself documents that attribute changes can take up to 60 seconds to
// propagate through the system, so serving attributes up to one second stale on a
// gateway instance other than the one that changed them stays within SQS semantics. The
// instance that makes a change drops its own entry at once.
const defaultQueueCacheTTL = time.Second

// queueCacheMaxEntries bounds the cache; past it, expired entries are dropped and, if
// none have expired, new queues are simply not cached until some do.
const queueCacheMaxEntries = 10000

// queueCache holds drivers.Queue values by name for the message hot paths (send,
// receive), saving a database round trip per call. It never holds negative results, so
// a queue created elsewhere is usable at once. A stale entry for a queue deleted through
// another instance is harmless: the drivers fail sends and receives on a missing queue
// with KindNotFound themselves.
type queueCache struct {
	ttl time.Duration // <= 0: caching disabled

	mu sync.Mutex
	m  map[string]cachedQueue
	// gen counts invalidations. A fill that began before an invalidation may carry data
	// read before the change, so put stores it only if gen has not moved since.
	gen uint64
}

type cachedQueue struct {
	q       drivers.Queue
	expires time.Time
}

func newQueueCache(ttl time.Duration) *queueCache {
	return &queueCache{ttl: ttl, m: make(map[string]cachedQueue)}
}

// get returns the live entry for name, if any. It also returns the generation to hand to
// put when the caller fills a miss.
func (c *queueCache) get(name string, now time.Time) (drivers.Queue, bool, uint64) {
	if c.ttl <= 0 {
		return drivers.Queue{}, false, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if ok && now.Before(e.expires) {
		return e.q, true, c.gen
	}
	if ok {
		delete(c.m, name)
	}
	return drivers.Queue{}, false, c.gen
}

// put stores q, read from the driver after get returned gen, unless an invalidation
// happened in between.
func (c *queueCache) put(q drivers.Queue, gen uint64, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if _, ok := c.m[q.Name]; !ok && len(c.m) >= queueCacheMaxEntries {
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= queueCacheMaxEntries {
			return
		}
	}
	c.m[q.Name] = cachedQueue{q: q, expires: now.Add(c.ttl)}
}

// invalidate drops name's entry and stops fills in flight from storing what they read.
func (c *queueCache) invalidate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, name)
}

// len is the number of entries held, expired or not (tests).
func (c *queueCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
