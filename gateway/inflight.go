package gateway

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// DefaultMaxInFlight is SQS's quota of in-flight messages per queue, standard and FIFO
// alike: messages received and neither deleted nor visible again.
const DefaultMaxInFlight = 120000

// The in-flight limit. At the limit SQS answers a short-poll receive on a standard queue
// with OverLimit, and a long poll, or any receive on a FIFO queue, with no message and no
// error. A receive near the limit returns at most the messages that fit.
//
// The gateway keeps, per queue, the backend's count of in-flight messages (QueueStats
// NotVisible) plus the messages it received through this instance since, less those it
// deleted. It asks the backend again when that estimate could reach the limit with this
// receive, when the count is a second old and the estimate past half the limit, and
// otherwise once a minute; so far below the limit a receive costs a map lookup, and near
// it a count. Other instances' receives show up in the next count: across several
// gateways the limit holds within what they receive between two counts.
type inFlight struct {
	max int64 // <= 0: no limit

	mu     sync.Mutex
	queues map[string]*inFlightCount
}

// inFlightCount is one queue's estimate: counted at the backend at at, changed by delta
// through this instance since.
type inFlightCount struct {
	counted int64
	at      time.Time
	delta   int64
}

const (
	inFlightRecountNear = time.Second // from half the limit on
	inFlightRecountFar  = time.Minute
)

// errAtInFlightLimit says a queue holds as many in-flight messages as the limit allows.
var errAtInFlightLimit = errors.New("at the in-flight limit")

func newInFlight(max int64) *inFlight {
	return &inFlight{max: max, queues: map[string]*inFlightCount{}}
}

// room returns how many of want messages a receive on queue may take at now, counting
// with stats when the estimate is not good enough; errAtInFlightLimit when none.
func (f *inFlight) room(ctx context.Context, queue string, want int, now time.Time,
	stats func(context.Context) (drivers.QueueStats, error)) (int, error) {
	if f.max <= 0 {
		return want, nil
	}
	f.mu.Lock()
	c := f.queues[queue]
	if c == nil || f.recount(c, want, now) {
		f.mu.Unlock()
		st, err := stats(ctx)
		if err != nil {
			return 0, err
		}
		f.mu.Lock()
		if f.queues[queue] == nil && len(f.queues) >= maxInFlightQueues {
			clear(f.queues) // bounded memory: forgotten queues are counted again
		}
		c = &inFlightCount{counted: st.NotVisible, at: now}
		f.queues[queue] = c
	}
	left := f.max - max(c.estimate(), 0)
	f.mu.Unlock()
	if left <= 0 {
		return 0, errAtInFlightLimit
	}
	return int(min(int64(want), left)), nil
}

// recount says whether c is too old, or too near the limit, for a receive of want at now.
func (f *inFlight) recount(c *inFlightCount, want int, now time.Time) bool {
	est, age := c.estimate(), now.Sub(c.at)
	return est+int64(want) > f.max || age < 0 ||
		(2*est >= f.max && age >= inFlightRecountNear) || age >= inFlightRecountFar
}

func (c *inFlightCount) estimate() int64 { return c.counted + c.delta }

// maxInFlightQueues bounds the queues whose estimate one gateway keeps.
const maxInFlightQueues = 100000

// received records n messages received from queue through this instance.
func (f *inFlight) received(queue string, n int) {
	if f.max <= 0 || n == 0 {
		return
	}
	f.mu.Lock()
	if c := f.queues[queue]; c != nil {
		c.delta += int64(n)
	}
	f.mu.Unlock()
}

// released records n in-flight messages of queue deleted through this instance, and
// reports whether the queue's estimate was at the limit (waiting receives may go on).
func (f *inFlight) released(queue string, n int) (wasFull bool) {
	if f.max <= 0 || n == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.queues[queue]
	if c == nil {
		return false
	}
	wasFull = c.estimate() >= f.max
	c.delta -= int64(n)
	return wasFull
}

// forget drops queue's estimate (the queue was deleted or purged).
func (f *inFlight) forget(queue string) {
	f.mu.Lock()
	delete(f.queues, queue)
	f.mu.Unlock()
}

// atInFlightLimit is a short poll's answer at the limit: OverLimit on a standard queue,
// no message and no error on a FIFO queue, as SQS answers.
func (s *Server) atInFlightLimit(queue string) error {
	if strings.HasSuffix(queue, ".fifo") {
		return nil
	}
	return sqserr.New(sqserr.OverLimit, "Queue %s holds %d in-flight messages, the most a queue may hold; delete or release some before receiving more.",
		queue, s.on(queue).inflight.max)
}
