package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// waiters holds the long polls waiting on each queue. A waiter is a channel with room for
// one wake-up, so a notification that arrives between two receive attempts is kept, and a
// notifier never blocks.
type waiters struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

func newWaiters() *waiters { return &waiters{m: map[string]map[chan struct{}]struct{}{}} }

func (w *waiters) add(queue string) chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.m[queue] == nil {
		w.m[queue] = map[chan struct{}]struct{}{}
	}
	w.m[queue][ch] = struct{}{}
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(queue string, ch chan struct{}) {
	w.mu.Lock()
	delete(w.m[queue], ch)
	if len(w.m[queue]) == 0 {
		delete(w.m, queue)
	}
	w.mu.Unlock()
}

// count returns the number of long polls waiting.
func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, set := range w.m {
		n += len(set)
	}
	return n
}

// notify wakes every long poll on queue.
func (w *waiters) notify(queue string) {
	w.mu.Lock()
	for ch := range w.m[queue] {
		wake(ch)
	}
	w.mu.Unlock()
}

// notifyAll wakes every long poll, for changes whose queues are not known (a move task
// sending messages back to their sources).
func (w *waiters) notifyAll() {
	w.mu.Lock()
	for _, set := range w.m {
		for ch := range set {
			wake(ch)
		}
	}
	w.mu.Unlock()
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// longPoll receives from req.Name, waiting up to wait for a message. It registers its
// waiter before each receive attempt, so a send that lands between an empty receive and
// the wait still wakes it. Besides sends through this gateway it wakes when the driver's
// NextVisibleAt arrives (a delay or visibility timeout ending) and at the deadline, both
// as timers on the gateway clock, and returns empty when the client goes away. Before
// its first wait it makes sure the driver reports other instances' sends to the queue
// (watch), and receives once more if that took a new watch. For a driver without
// notifications (ActivityPoll) it also re-checks on a backoff bounded by the declared
// poll interval; a BlockingReceive driver is given the time left to wait in the backend.
func (s *Server) longPoll(ctx context.Context, req drivers.ReceiveMessagesRequest, wait time.Duration) ([]drivers.Message, error) {
	var deadline time.Time
	b := s.on(req.Name)
	receive := func() (drivers.ReceiveMessagesResult, error) {
		req.Now = s.clock.Now()
		if b.desc.BlockingReceive && !deadline.IsZero() {
			req.WaitTime = deadline.Sub(req.Now)
		}
		r := req
		var err error
		r.MaxMessages, err = b.inflight.room(ctx, req.Name, req.MaxMessages, req.Now, func(ctx context.Context) (drivers.QueueStats, error) {
			return b.driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: req.Name, Now: req.Now})
		})
		if err == errAtInFlightLimit {
			return drivers.ReceiveMessagesResult{}, err
		} else if err != nil {
			return drivers.ReceiveMessagesResult{}, driverError(err, req.Name)
		}
		res, err := b.driver.ReceiveMessages(ctx, r)
		if err != nil {
			return res, driverError(err, req.Name)
		}
		b.inflight.received(req.Name, len(res.Messages))
		s.qm.received(req.Name, len(res.Messages), res.DeadLettered)
		return res, nil
	}
	if wait <= 0 {
		res, err := receive()
		if err == errAtInFlightLimit {
			return nil, s.atInFlightLimit(req.Name)
		}
		return res.Messages, err
	}
	ch := s.waiters.add(req.Name)
	defer s.waiters.remove(req.Name, ch)
	deadline = s.clock.Now().Add(wait)
	deadlineTimer := s.clock.AfterFuncAt(deadline, func() { wake(ch) })
	defer deadlineTimer.Stop()
	watching := false
	recheck := pollBackoff{max: b.desc.PollInterval}
	for {
		select { // drop a stale wake-up; the receive below sees its cause
		case <-ch:
		default:
		}
		res, err := receive()
		full := err == errAtInFlightLimit
		if full {
			// A long poll at the limit waits, as on an empty queue; a delete through
			// this gateway wakes it, a recount finds other instances' deletes.
			err, res.NextVisibleAt = nil, s.clock.Now().Add(inFlightRecountNear)
		}
		if err != nil || len(res.Messages) > 0 {
			return res.Messages, err
		}
		now := s.clock.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		if !watching {
			watching = true
			took, err := s.watch(ctx, req.Name, deadline)
			if err != nil {
				return nil, err
			}
			if took {
				continue // a send that committed before the watch is visible now
			}
		}
		nv := res.NextVisibleAt
		if b.desc.Activity == drivers.ActivityPoll {
			// Nothing tells this gateway of other instances' writes: look again soon.
			if at := now.Add(recheck.next()); nv.IsZero() || at.Before(nv) {
				nv = at
			}
		}
		var visibleTimer interface{ Stop() bool }
		if !nv.IsZero() && nv.Before(deadline) {
			visibleTimer = s.clock.AfterFuncAt(nv, func() { wake(ch) })
		}
		if s.onWait != nil {
			s.onWait(req.Name)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if visibleTimer != nil {
				visibleTimer.Stop()
			}
			return nil, nil
		case <-s.ctx.Done():
			if visibleTimer != nil {
				visibleTimer.Stop()
			}
			return nil, nil
		}
		if visibleTimer != nil {
			visibleTimer.Stop()
		}
	}
}

// pollBackoff spaces the re-checks of a waiting receive on an ActivityPoll driver:
// firstRecheck, doubling up to max, so a message sent soon after the poll started is
// picked up quickly and a long idle wait costs a few receives, never more than one per
// max (the declared worst-case pickup delay).
type pollBackoff struct {
	max, cur time.Duration
}

// firstRecheck is the first gap between re-checks of an ActivityPoll driver.
const firstRecheck = 100 * time.Millisecond

func (b *pollBackoff) next() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = min(firstRecheck, b.max)
	case b.cur < b.max:
		b.cur = min(2*b.cur, b.max)
	}
	return b.cur
}

// watchSlack is how long past the deadline of the poll that takes it a watch lasts, so
// that back-to-back long polls on a queue take a new one about once a minute, not each.
const watchSlack = time.Minute

// watch makes sure the driver, if its activity mode is ActivityWatch, reports other
// instances' sends to queue until deadline. It says whether it took a new watch.
func (s *Server) watch(ctx context.Context, queue string, deadline time.Time) (bool, error) {
	b := s.on(queue)
	if b.desc.Activity != drivers.ActivityWatch {
		return false, nil
	}
	s.watchMu.Lock()
	until, ok := s.watched[queue]
	s.watchMu.Unlock()
	if ok && !until.Before(deadline) {
		return false, nil
	}
	until = deadline.Add(watchSlack)
	if err := b.driver.WatchActivity(ctx, drivers.WatchActivityRequest{Name: queue, Until: until}); err != nil {
		return false, driverError(err, queue)
	}
	s.watchMu.Lock()
	if until.After(s.watched[queue]) {
		s.watched[queue] = until
	}
	s.pruneWatchedLocked()
	s.watchMu.Unlock()
	return true, nil
}

// minWatchedPrune is the smallest size of the watched map that triggers a pruning pass.
const minWatchedPrune = 1024

// pruneWatchedLocked drops lapsed watches whenever the map has doubled since the last
// pass, so that a gateway long-polling many short-lived queues does not keep every name
// it ever watched, at an amortised constant cost per new watch.
func (s *Server) pruneWatchedLocked() {
	if len(s.watched) < s.watchedPruneAt {
		return
	}
	now := s.clock.Now()
	for q, until := range s.watched {
		if !until.After(now) {
			delete(s.watched, q)
		}
	}
	s.watchedPruneAt = max(2*len(s.watched), minWatchedPrune)
}

// awaitActivityRetry is how long (clock time) the relay waits after AwaitActivity fails.
const awaitActivityRetry = time.Second

// awaitActivityLoop relays the driver's cross-instance notifications to local long polls;
// New starts it only for ActivityNotify and ActivityWatch drivers. A failed call is retried after
// awaitActivityRetry, and meanwhile every long poll is woken once so that none misses
// a notification lost with the failure.
func (s *Server) awaitActivityLoop(b *backend) {
	defer s.bg.Done()
	for s.ctx.Err() == nil {
		res, err := b.driver.AwaitActivity(s.ctx, drivers.AwaitActivityRequest{Timeout: 20 * time.Second})
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("await activity failed; retrying", "backend", b.name, "err", err)
			s.waiters.notifyAll()
			retry := make(chan struct{})
			t := s.clock.AfterFunc(awaitActivityRetry, func() { close(retry) })
			select {
			case <-retry:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		for _, q := range res.Queues {
			s.waiters.notify(q)
		}
	}
}

// sweepBatch bounds one driver.Sweep call.
const sweepBatch = 1000

// scheduleSweep arms the next retention sweep on the gateway clock.
func (s *Server) scheduleSweep() {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if s.closed {
		return
	}
	s.sweepTimer = s.clock.AfterFunc(s.cfg.SweepInterval, s.sweep)
	if s.onSweepArmed != nil {
		s.onSweepArmed()
	}
}

// sweep runs each backend's Sweep until it reports no more, then schedules the next pass.
func (s *Server) sweep() {
	s.sweepMu.Lock()
	if s.closed {
		s.sweepMu.Unlock()
		return
	}
	s.bg.Add(1)
	s.sweepMu.Unlock()
	defer s.bg.Done()
	for _, b := range s.backends {
		for s.ctx.Err() == nil {
			res, err := b.driver.Sweep(s.ctx, drivers.SweepRequest{Now: s.clock.Now(), Limit: sweepBatch})
			if err != nil {
				if s.ctx.Err() == nil {
					s.log.Warn("retention sweep failed", "backend", b.name, "err", err)
				}
				break
			}
			if !res.More {
				break
			}
		}
	}
	s.scheduleSweep()
}
