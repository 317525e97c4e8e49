package migrate

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// checkBrowse refuses, before anything is written, a run that needs BrowseMessages
// where the backend declares it cannot look without receiving.
func (m *migration) checkBrowse() error {
	need := func(d drivers.Description, side, why string) error {
		if dec, ok := d.Declaration(capabilities.QueueBrowse); ok && dec.Level == capabilities.Unsupported {
			return fmt.Errorf("%s backend %s cannot list messages without receiving them (queue.browse unsupported), which %s needs", side, d.Name, why)
		}
		return nil
	}
	if m.o.Mode == Copy {
		if err := need(m.fromDesc, "source", "--mode copy"); err != nil {
			return err
		}
	}
	if m.o.Verify {
		if m.o.Mode == Copy {
			if err := need(m.fromDesc, "source", "--verify"); err != nil {
				return err
			}
		}
		return need(m.toDesc, "destination", "--verify")
	}
	return nil
}

// messages migrates the messages of every queue that was not refused.
func (m *migration) messages(ctx context.Context, rep *Report) error {
	var runs []*queueRun
	for i := range rep.Queues {
		qr := &rep.Queues[i]
		if qr.Refused != "" {
			continue
		}
		q, err := m.o.From.Driver.GetQueue(ctx, drivers.GetQueueRequest{Name: qr.Name})
		if err != nil {
			return fmt.Errorf("source: queue %s: %w", qr.Name, err)
		}
		st, err := m.o.From.Driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: qr.Name, Now: m.o.Now()})
		if err != nil {
			return fmt.Errorf("source: queue %s: %w", qr.Name, err)
		}
		m.progress.Total += st.Visible + st.NotVisible + st.Delayed
		runs = append(runs, m.newQueueRun(q, qr))
	}
	m.progress.Queues = len(runs)
	for _, r := range runs {
		if err := m.resolveUncertain(ctx, r); err != nil {
			return err
		}
		var err error
		if m.o.Mode == Move {
			err = m.moveQueue(ctx, r)
		} else {
			err = m.copyQueue(ctx, r)
		}
		if err != nil {
			return err
		}
		if err := m.j.append(record{T: "done", Q: r.q.Name}); err != nil {
			return err
		}
		m.mu.Lock()
		m.progress.QueuesDone++
		m.mu.Unlock()
		m.advance(0)
		m.o.Log.Info("queue done", "queue", r.q.Name, "sent", r.qr.Sent, "skipped", r.qr.Skipped)
	}
	if m.o.Mode == Move {
		// Dead-letter queues went first, but moving a queue receives its messages, and a
		// message whose receive count reached maxReceiveCount at the source went to its
		// dead-letter queue instead: move what reached them meanwhile.
		for _, r := range runs {
			if !isDeadLetterTarget(r.q.Name, runs) {
				continue
			}
			if err := m.moveQueue(ctx, r); err != nil {
				return err
			}
		}
	}
	m.j.view(func(s *journalState) {
		for _, q := range s.queues {
			for _, consumed := range q.mayDup {
				rep.MayDuplicate++
				if consumed {
					rep.MayDuplicateIfConsumed++
				}
			}
		}
	})
	return nil
}

// isDeadLetterTarget reports whether a queue among runs redrives to name
// (sqsrule.RedriveTarget).
func isDeadLetterTarget(name string, runs []*queueRun) bool {
	for _, r := range runs {
		if dlq, _, ok := sqsrule.RedriveTarget(r.q.Name, r.q.Attributes.RedrivePolicy); ok && dlq == name {
			return true
		}
	}
	return false
}

// resolveUncertain looks at the destination for the messages an interrupted run had
// begun to send without recording the acknowledgement: those found there were sent.
// The others stay uncertain; sending them again is counted as a possible duplicate
// unless the destination's FIFO deduplication is sure to catch it.
func (m *migration) resolveUncertain(ctx context.Context, r *queueRun) error {
	var pending map[string]time.Time
	m.j.view(func(s *journalState) {
		if q := s.queues[r.q.Name]; q != nil && len(q.sending) > 0 {
			pending = map[string]time.Time{}
			for id, at := range q.sending {
				pending[id] = at
			}
		}
	})
	if len(pending) == 0 {
		return nil
	}
	if dec, ok := m.toDesc.Declaration(capabilities.QueueBrowse); ok && dec.Level == capabilities.Unsupported {
		return nil
	}
	var found, sums []string
	err := browse(ctx, m.o.To.Driver, r.q.Name, m.o.Now, func(b drivers.BrowsedMessage) bool {
		if _, ok := pending[b.MessageID]; ok {
			found, sums = append(found, b.MessageID), append(sums, digest(b.Message))
			delete(pending, b.MessageID)
		}
		return len(pending) > 0
	})
	if err != nil {
		return fmt.Errorf("destination: queue %s: %w", r.q.Name, err)
	}
	r.unseen = map[string]bool{}
	for id := range pending {
		r.unseen[id] = true
	}
	if len(found) > 0 {
		r.qr.Resolved = len(found)
		m.o.Log.Info("interrupted sends found at the destination", "queue", r.q.Name, "messages", len(found))
		return m.j.append(record{T: "sent", Q: r.q.Name, IDs: found, Sum: sums})
	}
	return nil
}

// browse calls fn with each message of queue name, page by page, until fn returns false.
func browse(ctx context.Context, d drivers.Driver, name string, now func() time.Time, fn func(drivers.BrowsedMessage) bool) error {
	after := ""
	for {
		res, err := d.BrowseMessages(ctx, drivers.BrowseMessagesRequest{Name: name, Now: now(), After: after, Limit: 100})
		if err != nil {
			return err
		}
		for _, b := range res.Messages {
			if !fn(b) {
				return nil
			}
		}
		if res.NextAfter == "" {
			return nil
		}
		after = res.NextAfter
	}
}

func browseAll(ctx context.Context, d drivers.Driver, name string, now func() time.Time) ([]drivers.BrowsedMessage, error) {
	var all []drivers.BrowsedMessage
	err := browse(ctx, d, name, now, func(b drivers.BrowsedMessage) bool {
		all = append(all, b)
		return true
	})
	return all, err
}

// wait pauses for the poll interval, or until ctx ends.
func (m *migration) wait(ctx context.Context) error {
	t := time.NewTimer(m.o.PollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// sent reports whether the journal has id as acknowledged by the destination.
func (m *migration) sent(queue, id string) (ok bool) {
	m.j.view(func(s *journalState) {
		if q := s.queues[queue]; q != nil {
			_, ok = q.sent[id]
		}
	})
	return ok
}

// remaining is the delay a message browsed at now has left, in whole seconds.
func remaining(b drivers.BrowsedMessage, now time.Time) int32 {
	if b.State != drivers.StateDelayed || !b.VisibleAt.After(now) {
		return 0
	}
	d := int32((b.VisibleAt.Sub(now) + time.Second - 1) / time.Second)
	return min(d, 900)
}

// copyQueue sends a copy of the queue's messages. A FIFO queue is read whole and sent
// group by group in sequence order; a standard queue page by page.
func (m *migration) copyQueue(ctx context.Context, r *queueRun) error {
	if r.fifo {
		return m.copyFIFO(ctx, r)
	}
	pending := map[string]bool{} // in flight, waited for
	queued := map[string]bool{}  // sent or being sent in this run
	after := ""
	for {
		now := m.o.Now()
		res, err := m.o.From.Driver.BrowseMessages(ctx, drivers.BrowseMessagesRequest{Name: r.q.Name, Now: now, After: after, Limit: 100})
		if err != nil {
			return fmt.Errorf("source: queue %s: %w", r.q.Name, err)
		}
		var items []item
		for _, b := range res.Messages {
			// An at-least-once redrive may leave two copies with one id: send one.
			if m.sent(r.q.Name, b.MessageID) || queued[b.MessageID] {
				continue
			}
			queued[b.MessageID] = true
			if b.State == drivers.StateInFlight {
				switch m.o.InFlight {
				case InFlightSkip:
					r.qr.Skipped++
					continue
				case InFlightWait:
					pending[b.MessageID] = true
					continue
				}
			}
			items = append(items, item{msg: b.Message, delay: remaining(b, now)})
		}
		if _, err := m.sendBatches(ctx, r, splitGroups(items, false)); err != nil {
			return err
		}
		if res.NextAfter == "" {
			break
		}
		after = res.NextAfter
	}
	for len(pending) > 0 {
		m.o.Log.Info("waiting for in-flight messages", "queue", r.q.Name, "messages", len(pending))
		if err := m.wait(ctx); err != nil {
			return err
		}
		now := m.o.Now()
		all, err := browseAll(ctx, m.o.From.Driver, r.q.Name, m.o.Now)
		if err != nil {
			return fmt.Errorf("source: queue %s: %w", r.q.Name, err)
		}
		var items []item
		still := map[string]bool{}
		for _, b := range all {
			if !pending[b.MessageID] {
				continue
			}
			if b.State == drivers.StateInFlight {
				still[b.MessageID] = true
			} else {
				items = append(items, item{msg: b.Message, delay: remaining(b, now)})
			}
		}
		pending = still // the rest were deleted by their consumers
		if _, err := m.sendBatches(ctx, r, splitGroups(items, false)); err != nil {
			return err
		}
	}
	return nil
}

func (m *migration) copyFIFO(ctx context.Context, r *queueRun) error {
	var all []drivers.BrowsedMessage
	var now time.Time
	for {
		now = m.o.Now()
		var err error
		if all, err = browseAll(ctx, m.o.From.Driver, r.q.Name, m.o.Now); err != nil {
			return fmt.Errorf("source: queue %s: %w", r.q.Name, err)
		}
		inFlight := 0
		for _, b := range all {
			if b.State == drivers.StateInFlight {
				inFlight++
			}
		}
		// A group's in-flight head must go before the rest of the group: wait for it.
		if inFlight == 0 || m.o.InFlight != InFlightWait {
			break
		}
		m.o.Log.Info("waiting for in-flight messages", "queue", r.q.Name, "messages", inFlight)
		if err := m.wait(ctx); err != nil {
			return err
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.MessageGroupID != b.MessageGroupID {
			return a.MessageGroupID < b.MessageGroupID
		}
		return seqLess(a.SequenceNumber, b.SequenceNumber)
	})
	var items []item
	queued := map[string]bool{}
	for _, b := range all {
		if m.sent(r.q.Name, b.MessageID) || queued[b.MessageID] {
			continue
		}
		queued[b.MessageID] = true
		if b.State == drivers.StateInFlight && m.o.InFlight == InFlightSkip {
			r.qr.Skipped++
			continue
		}
		items = append(items, item{msg: b.Message, delay: remaining(b, now)})
	}
	_, err := m.sendBatches(ctx, r, splitGroups(items, true))
	return err
}

// seqLess compares decimal sequence numbers; an empty one sorts as equal.
func seqLess(a, b string) bool {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	if !okx || !oky {
		return false
	}
	return x.Cmp(y) < 0
}

// moveQueue moves the queue's visible messages until none is left, waiting for delayed
// ones and (unless InFlightSkip) for those in flight.
func (m *migration) moveQueue(ctx context.Context, r *queueRun) error {
	workers := m.o.Workers
	if r.fifo {
		workers = 1 // one receive at a time keeps each group's batches in order
	}
	for {
		before := r.sentSoFar()
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = m.moveLoop(ctx, r)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		st, err := m.o.From.Driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: r.q.Name, Now: m.o.Now()})
		if err != nil {
			return fmt.Errorf("source: queue %s: %w", r.q.Name, err)
		}
		waiting := st.Delayed
		if m.o.InFlight != InFlightSkip {
			waiting += st.NotVisible
		}
		if st.Visible == 0 && waiting == 0 {
			return nil
		}
		if st.Visible == 0 || r.sentSoFar() == before {
			m.o.Log.Info("waiting for delayed or in-flight messages", "queue", r.q.Name, "delayed", st.Delayed, "in_flight", st.NotVisible)
			if err := m.wait(ctx); err != nil {
				return err
			}
		}
	}
}

// moveLoop receives, sends and deletes until a receive comes back empty.
func (m *migration) moveLoop(ctx context.Context, r *queueRun) error {
	vt := int32((m.o.VisibilityTimeout + time.Second - 1) / time.Second)
	for {
		res, err := m.o.From.Driver.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{
			Name: r.q.Name, Now: m.o.Now(), MaxMessages: 10, VisibilityTimeout: vt})
		if err != nil {
			return fmt.Errorf("source: queue %s: receive: %w", r.q.Name, err)
		}
		if len(res.Messages) == 0 {
			return nil
		}
		if err := m.moveBatch(ctx, r, res.Messages); err != nil {
			return err
		}
	}
}

// moveBatch sends received messages the journal does not show as sent, then deletes at
// the source those the destination has.
func (m *migration) moveBatch(ctx context.Context, r *queueRun, received []drivers.Message) error {
	mine := r.claim(received)
	defer r.release(mine)
	var items []item
	var del []drivers.DeleteEntry
	handles := map[string]string{}
	for _, msg := range mine {
		handles[msg.MessageID] = msg.ReceiptHandle
		if m.sent(r.q.Name, msg.MessageID) {
			// Sent by an earlier attempt; only its deletion at the source was missing.
			del = append(del, drivers.DeleteEntry{EntryID: strconv.Itoa(len(del)), ReceiptHandle: msg.ReceiptHandle})
			continue
		}
		items = append(items, item{msg: msg})
	}
	acked, sendErr := m.sendBatches(ctx, r, splitGroups(items, r.fifo))
	for _, it := range items {
		if acked[it.msg.MessageID] {
			del = append(del, drivers.DeleteEntry{EntryID: strconv.Itoa(len(del)), ReceiptHandle: handles[it.msg.MessageID]})
		}
	}
	if err := m.deleteAtSource(ctx, r, del); err != nil {
		return err
	}
	m.hook("deleted")
	return sendErr
}

// deleteAtSource deletes what the destination has. A stale handle is harmless: the
// message comes back, the journal says it was sent, and it is deleted then.
func (m *migration) deleteAtSource(ctx context.Context, r *queueRun, del []drivers.DeleteEntry) error {
	for i := 0; i < len(del); i += 10 {
		res, err := m.o.From.Driver.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: r.q.Name, Now: m.o.Now(), Entries: del[i:min(i+10, len(del))]})
		if err != nil {
			return fmt.Errorf("source: queue %s: delete: %w", r.q.Name, err)
		}
		for _, e := range res.Entries {
			if e.Err != nil {
				m.o.Log.Warn("delete at the source failed; the message will be deleted when it comes back",
					"queue", r.q.Name, "error", e.Err)
			}
		}
	}
	return nil
}
