package migrate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// dedupWindow is how long after a send the destination's FIFO deduplication surely
// still remembers it: SQS's five minutes, less a margin for clock differences.
const dedupWindow = 4*time.Minute + 30*time.Second

// queueRun is one queue being migrated.
type queueRun struct {
	q    drivers.Queue // the source queue
	fifo bool
	// dedup: the destination queue deduplicates FIFO sends by deduplication id, so a
	// resent message within the window is never stored twice.
	dedup bool

	mu sync.Mutex
	qr *QueueReport
	// handling: ids a worker of this run has received and not finished with. A message
	// whose visibility timeout ran out while its worker was still sending comes back to
	// another worker, which must leave it alone: its first worker sends it, and it is
	// deleted when it comes back again, the journal showing it sent.
	handling map[string]bool
	// unseen: ids an interrupted run had begun to send that the destination did not
	// show on resume. Sent again, they are there twice only if a consumer at the
	// destination took the first copy in between.
	unseen map[string]bool
}

// claim returns the messages no other worker is handling, and marks them handled.
func (r *queueRun) claim(msgs []drivers.Message) []drivers.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handling == nil {
		r.handling = map[string]bool{}
	}
	var mine []drivers.Message
	for _, m := range msgs {
		if !r.handling[m.MessageID] {
			r.handling[m.MessageID] = true
			mine = append(mine, m)
		}
	}
	return mine
}

func (r *queueRun) release(msgs []drivers.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		delete(r.handling, m.MessageID)
	}
}

func (r *queueRun) sentSoFar() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.qr.Sent
}

// item is one message to send, with the delay it has left.
type item struct {
	msg   drivers.Message
	delay int32
}

func (m *migration) newQueueRun(q drivers.Queue, qr *QueueReport) *queueRun {
	qrun := &queueRun{q: q, fifo: q.Attributes.FifoQueue, qr: qr}
	if qrun.fifo {
		d, _ := m.toDesc.Declaration(capabilities.FIFODedupExplicit)
		qrun.dedup = rank(d.Level) == 2
	}
	return qrun
}

// sendBatches sends batches (each at most 10 messages, each of one message group on a
// FIFO queue, in order) to the destination. Before sending it journals the ids as being
// sent, after it the ids the destination acknowledged; it returns those. FIFO batches go
// one after the other, in order; standard ones up to Workers at once.
func (m *migration) sendBatches(ctx context.Context, qr *queueRun, batches [][]item) (map[string]bool, error) {
	var ids []string
	for _, b := range batches {
		for _, it := range b {
			ids = append(ids, it.msg.MessageID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	uncertain := map[string]time.Time{}
	m.j.view(func(s *journalState) {
		qj := s.queue(qr.q.Name)
		for _, id := range ids {
			if at, ok := qj.sending[id]; ok {
				uncertain[id] = at
			}
		}
	})
	now := m.o.Now()
	if err := m.j.append(record{T: "sending", Q: qr.q.Name, IDs: ids, At: now}); err != nil {
		return nil, err
	}
	m.hook("sending")
	outs := make([]sendOutcome, len(batches))
	if qr.fifo {
		for i, b := range batches {
			if outs[i] = m.sendBatch(ctx, qr, b); outs[i].err != nil {
				break // later batches of the group must not overtake this one
			}
		}
	} else {
		sem := make(chan struct{}, m.o.Workers)
		var wg sync.WaitGroup
		for i, b := range batches {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				outs[i] = m.sendBatch(ctx, qr, b)
				<-sem
			}()
		}
		wg.Wait()
	}
	m.hook("sent")
	acked := map[string]bool{}
	var sent, sums, unsent, mayDup, mayDupConsumed []string
	var firstErr error
	for _, o := range outs {
		for i, id := range o.acked {
			acked[id] = true
			sent, sums = append(sent, id), append(sums, o.sums[i])
			if at, ok := uncertain[id]; ok && !o.confirmed[id] && !(qr.dedup && now.Sub(at) < dedupWindow) {
				if qr.unseen[id] {
					mayDupConsumed = append(mayDupConsumed, id)
				} else {
					mayDup = append(mayDup, id)
				}
			}
		}
		unsent = append(unsent, o.unsent...)
		if firstErr == nil {
			firstErr = o.err
		}
	}
	if len(sent) > 0 {
		if err := m.j.append(record{T: "sent", Q: qr.q.Name, IDs: sent, Sum: sums}); err != nil {
			return nil, err
		}
	}
	if len(unsent) > 0 {
		if err := m.j.append(record{T: "unsent", Q: qr.q.Name, IDs: unsent}); err != nil {
			return nil, err
		}
	}
	if len(mayDup) > 0 {
		m.o.Log.Warn("sent again after an interrupted run; the destination may have them twice", "queue", qr.q.Name, "messages", len(mayDup))
		if err := m.j.append(record{T: "maydup", Q: qr.q.Name, IDs: mayDup}); err != nil {
			return nil, err
		}
	}
	if len(mayDupConsumed) > 0 {
		if err := m.j.append(record{T: "maydup", Q: qr.q.Name, IDs: mayDupConsumed, Consumed: true}); err != nil {
			return nil, err
		}
	}
	m.hook("journaled")
	qr.mu.Lock()
	qr.qr.Sent += len(sent)
	qr.mu.Unlock()
	m.advance(int64(len(sent)))
	return acked, firstErr
}

// sendOutcome is what one SendMessages call did.
type sendOutcome struct {
	acked     []string // ids the destination stored (or, for our own earlier send, remembered)
	sums      []string
	confirmed map[string]bool // acked as a duplicate of our own earlier send
	unsent    []string        // ids the destination surely did not store
	err       error
}

func (m *migration) sendBatch(ctx context.Context, qr *queueRun, b []item) sendOutcome {
	req := drivers.SendMessagesRequest{Name: qr.q.Name, Now: m.o.Now()}
	for i, it := range b {
		msg := it.msg
		req.Entries = append(req.Entries, drivers.SendEntry{
			EntryID: strconv.Itoa(i), MessageID: msg.MessageID, Body: msg.Body,
			Attributes: msg.Attributes, SystemAttributes: msg.SystemAttributes,
			DelaySeconds: it.delay, MessageGroupID: msg.MessageGroupID,
			MessageDeduplicationID: msg.MessageDeduplicationID, SenderID: msg.SenderID,
		})
	}
	var o sendOutcome
	res, err := m.o.To.Driver.SendMessages(ctx, req)
	if err != nil {
		// A failed call applied nothing, except when the outcome is unknown: then the
		// ids stay "sending", and a later run resolves them.
		if k := drivers.KindOf(err); k != drivers.KindUnavailable && k != drivers.KindUnknown &&
			!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			for _, it := range b {
				o.unsent = append(o.unsent, it.msg.MessageID)
			}
		}
		o.err = fmt.Errorf("queue %s: send at the destination: %w", qr.q.Name, err)
		return o
	}
	o.confirmed = map[string]bool{}
	for i, e := range res.Entries {
		msg := b[i].msg
		switch {
		case e.Err != nil:
			o.unsent = append(o.unsent, msg.MessageID)
			if o.err == nil {
				o.err = fmt.Errorf("queue %s: message %s: send at the destination: %w", qr.q.Name, msg.MessageID, e.Err)
			}
			if qr.fifo {
				// Later messages of the group stay behind it: stop here.
				for _, rest := range b[i+1:] {
					o.unsent = append(o.unsent, rest.msg.MessageID)
				}
				return o
			}
		case e.Duplicate && e.MessageID != msg.MessageID:
			o.unsent = append(o.unsent, msg.MessageID)
			if o.err == nil {
				o.err = fmt.Errorf("queue %s: message %s: the destination took its deduplication id %q for message %s "+
					"within its 5-minute window, so it was not stored; it stays at the source: run again in 5 minutes",
					qr.q.Name, msg.MessageID, msg.MessageDeduplicationID, e.MessageID)
			}
			if qr.fifo {
				for _, rest := range b[i+1:] {
					o.unsent = append(o.unsent, rest.msg.MessageID)
				}
				return o
			}
		default:
			if e.Duplicate {
				o.confirmed[msg.MessageID] = true
			}
			o.acked = append(o.acked, msg.MessageID)
			o.sums = append(o.sums, digest(msg))
		}
	}
	return o
}

// hook calls Options.Hook at a named point of a send.
func (m *migration) hook(point string) {
	if m.o.Hook != nil {
		m.o.Hook(point)
	}
}

func (m *migration) advance(n int64) {
	m.mu.Lock()
	m.progress.Messages += n
	p := m.progress
	m.mu.Unlock()
	if m.o.Progress != nil {
		m.o.Progress(p)
	}
}

// splitGroups cuts items into send batches of at most 10: on a FIFO queue each batch
// holds messages of one group, in their order.
func splitGroups(items []item, fifo bool) [][]item {
	var out [][]item
	if !fifo {
		for i := 0; i < len(items); i += 10 {
			out = append(out, items[i:min(i+10, len(items))])
		}
		return out
	}
	var groups []string
	byGroup := map[string][]item{}
	for _, it := range items {
		g := it.msg.MessageGroupID
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], it)
	}
	for _, g := range groups {
		out = append(out, splitGroups(byGroup[g], false)...)
	}
	return out
}
