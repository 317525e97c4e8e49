package servicebus

import (
	"context"
	"errors"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// checkQueue makes sure the queue exists unless every handle is a held lock, whose
// settlement finds out by itself: most settlements then cost no admin call.
func (d *Driver) checkQueue(ctx context.Context, queue string, n int, handle func(int) string) error {
	d.mu.Lock()
	all := true
	for i := range n {
		if h, ok := d.held[handle(i)]; !ok || h.queue != queue {
			all = false
			break
		}
	}
	d.mu.Unlock()
	if all {
		return nil
	}
	_, _, err := d.get(ctx, queue)
	return err
}

// DeleteMessages completes the messages whose locks this instance holds. A handle whose
// visibility ended no longer names a lock: on a standard queue the delete succeeds
// without effect and the message is delivered again (the declared receipt.stale
// degradation); on a FIFO queue it fails, as in SQS.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	if err := d.checkQueue(ctx, req.Name, len(req.Entries), func(i int) string { return req.Entries[i].ReceiptHandle }); err != nil {
		return drivers.BatchResult{}, err
	}
	out := drivers.BatchResult{Entries: make([]drivers.EntryResult, len(req.Entries))}
	for i, e := range req.Entries {
		out.Entries[i].EntryID = e.EntryID
		if err := ctx.Err(); err != nil {
			return drivers.BatchResult{}, err
		}
		h, state := d.lookup(req.Name, e.ReceiptHandle)
		if state == handleForeign {
			out.Entries[i].Err = invalidHandle(req.Name)
			continue
		}
		// A lock that ended cannot be completed: the handle is stale whatever its state.
		st := sqsrule.HandleStale
		if state == handleHeld {
			st = sqsrule.HandleInFlight
		}
		remove, rerr := sqsrule.Delete(st, isFIFO(req.Name))
		out.Entries[i].Err = rerr
		if !remove || !d.take(h) {
			continue // released or settled meanwhile
		}
		err := h.rcv.Complete(ctx, h.msg)
		switch {
		case err == nil:
			d.settled(h, false)
		case errors.Is(err, ErrLockLost):
			d.settled(h, true)
			if h.fifo {
				out.Entries[i].Err = drivers.Errorf(drivers.KindStaleReceiptHandle,
					"servicebus: queue %s: the message's lock was lost before the delete", req.Name)
			}
		default:
			// Outcome unknown: keep holding the lock, so a retry can complete it.
			d.mu.Lock()
			d.held[h.handle] = h
			d.armLocked(h)
			d.mu.Unlock()
			out.Entries[i].Err = asEntryErr(classify(err, "servicebus: complete in "+req.Name))
		}
	}
	return out, nil
}

func asEntryErr(err error) *drivers.Error {
	var de *drivers.Error
	if errors.As(err, &de) {
		return de
	}
	return &drivers.Error{Kind: drivers.KindUnavailable, Message: "servicebus", Err: err}
}

// ChangeVisibility moves a held message's deadline (renewing its lock when the deadline
// passes it), or releases it at once with a timeout of zero. A handle whose lock ended
// fails with KindStaleReceiptHandle, whatever the queue type.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	if err := d.checkQueue(ctx, req.Name, len(req.Entries), func(i int) string { return req.Entries[i].ReceiptHandle }); err != nil {
		return drivers.BatchResult{}, err
	}
	out := drivers.BatchResult{Entries: make([]drivers.EntryResult, len(req.Entries))}
	for i, e := range req.Entries {
		out.Entries[i].EntryID = e.EntryID
		if err := ctx.Err(); err != nil {
			return drivers.BatchResult{}, err
		}
		if e.VisibilityTimeout < 0 || e.VisibilityTimeout > int32(d.opts.MaxVisibilitySeconds) {
			out.Entries[i].Err = d.tooLong(req.Name, e.VisibilityTimeout)
			continue
		}
		h, state := d.lookup(req.Name, e.ReceiptHandle)
		switch state {
		case handleForeign:
			out.Entries[i].Err = invalidHandle(req.Name)
			continue
		case handleExpired, handleStale:
			// The lock is gone with the visibility timeout, and a broker cannot take back
			// an old lock: the change SQS would apply on a standard queue fails (the
			// declared receipt.stale degradation).
			out.Entries[i].Err = drivers.Errorf(drivers.KindStaleReceiptHandle,
				"servicebus: queue %s: the handle's lock has ended (visibility timeout passed, received again or deleted)", req.Name)
			continue
		}
		now := d.now()
		deadline := now.Add(time.Duration(e.VisibilityTimeout) * time.Second)
		if err := sqsrule.VisibilityCap(e.VisibilityTimeout, deadline, h.receivedAt); err != nil {
			out.Entries[i].Err = err
			continue
		}
		if e.VisibilityTimeout == 0 {
			if d.take(h) {
				d.release(ctx, h, true)
			}
			continue
		}
		d.mu.Lock()
		if d.held[h.handle] == h {
			h.deadline = deadline
			d.armLocked(h)
		}
		d.mu.Unlock()
	}
	return out, nil
}

// releaseQueue abandons every message of queue this instance holds.
func (d *Driver) releaseQueue(ctx context.Context, queue string, complete bool) {
	d.mu.Lock()
	var hs []*held
	for _, h := range d.held {
		if h.queue == queue {
			hs = append(hs, h)
		}
	}
	d.mu.Unlock()
	for _, h := range hs {
		if !d.take(h) {
			continue
		}
		if complete {
			_ = h.rcv.Complete(ctx, h.msg)
			d.settled(h, false)
		} else {
			d.release(ctx, h, false)
		}
	}
}
