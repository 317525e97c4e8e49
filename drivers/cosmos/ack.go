package cosmos

import (
	"context"
	"net/http"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// lookupHandle reads the message a handle names and says what the handle is now.
func (d *Driver) lookupHandle(ctx context.Context, op string, q queueDoc, h string, now int64) (msgDoc, sqsrule.HandleState, error) {
	var m msgDoc
	r, ok := d.decodeHandle(h)
	if !ok || r.inc != q.Inc {
		return m, sqsrule.HandleForeign, nil
	}
	etag, found, err := d.readItem(ctx, op, q.pk(), msgItemID(r.mid), &m)
	if err != nil {
		return m, sqsrule.HandleForeign, err
	}
	m.ETag = etag
	switch {
	case !found || m.Gen < q.Gen:
		return m, sqsrule.HandleGone, nil
	case m.Tok != r.tok:
		return m, sqsrule.HandleStale, nil
	case m.Vis <= now:
		return m, sqsrule.HandleExpired, nil
	}
	return m, sqsrule.HandleInFlight, nil
}

// DeleteMessages deletes each message whose handle is current, conditionally on the
// ETag read with it: a claim made in between wins, and the delete is then stale.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	q, _, err := d.loadQueue(ctx, "DeleteMessages", req.Name)
	if err != nil {
		return drivers.BatchResult{}, err
	}
	now := ms(req.Now)
	res := drivers.BatchResult{Entries: make([]drivers.EntryResult, 0, len(req.Entries))}
	for _, e := range req.Entries {
		out, err := d.deleteOne(ctx, q, e, now)
		if err != nil {
			if ctx.Err() != nil {
				return drivers.BatchResult{}, ctx.Err()
			}
			// Earlier entries may have been applied: this failure is this entry's.
			out.Err = entryError(err)
		}
		res.Entries = append(res.Entries, out)
	}
	return res, nil
}

// deleteOne settles one handle, looking again when the message changed between the
// lookup and the conditional delete (a visibility change by the same holder).
func (d *Driver) deleteOne(ctx context.Context, q queueDoc, e drivers.DeleteEntry, now int64) (drivers.EntryResult, error) {
	out := drivers.EntryResult{EntryID: e.EntryID}
	for attempt := 0; ; attempt++ {
		m, state, err := d.lookupHandle(ctx, "DeleteMessages", q, e.ReceiptHandle, now)
		if err != nil {
			return out, err
		}
		remove, rerr := sqsrule.Delete(state, q.Attrs.FifoQueue)
		out.Err = rerr
		if remove {
			err := d.remove(ctx, "DeleteMessages", q.pk(), m.ID, m.ETag)
			switch s := statusOf(err); {
			case err == nil, s == http.StatusNotFound:
			case s == http.StatusPreconditionFailed && attempt < casAttempts:
				continue // changed since the lookup: look again
			default:
				out.Err = entryError(mapErr(ctx, err, "delete"))
			}
		}
		return out, nil
	}
}

// ChangeVisibility moves visibility deadlines, conditionally on the ETag; see
// drivers.Driver for which handles apply.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	q, _, err := d.loadQueue(ctx, "ChangeVisibility", req.Name)
	if err != nil {
		return drivers.BatchResult{}, err
	}
	now := ms(req.Now)
	res := drivers.BatchResult{Entries: make([]drivers.EntryResult, 0, len(req.Entries))}
	for _, e := range req.Entries {
		out, err := d.changeOne(ctx, q, e, now)
		if err != nil {
			if ctx.Err() != nil {
				return drivers.BatchResult{}, ctx.Err()
			}
			out.Err = entryError(err)
		}
		res.Entries = append(res.Entries, out)
	}
	return res, nil
}

// changeOne changes one message's deadline, looking again when the message changed
// between the lookup and the conditional replace (a receive, or another change). A
// standard queue takes any handle of a message that still exists, as SQS does; a FIFO
// queue only the current handle of an in-flight message.
func (d *Driver) changeOne(ctx context.Context, q queueDoc, e drivers.ChangeVisibilityEntry, now int64) (drivers.EntryResult, error) {
	out := drivers.EntryResult{EntryID: e.EntryID}
	deadline := now + int64(e.VisibilityTimeout)*1000
	for attempt := 0; ; attempt++ {
		m, state, err := d.lookupHandle(ctx, "ChangeVisibility", q, e.ReceiptHandle, now)
		if err != nil {
			return out, err
		}
		apply, rerr := sqsrule.ChangeVisibility(state, q.Attrs.FifoQueue, e.VisibilityTimeout, fromMS(deadline), fromMS(m.Recv))
		out.Err = rerr
		if apply {
			etag := m.ETag
			m.Vis, m.ETag = deadline, ""
			_, err := d.replace(ctx, "ChangeVisibility", q.pk(), m.ID, etag, m)
			switch s := statusOf(err); {
			case err == nil:
			case s == http.StatusPreconditionFailed && attempt < casAttempts:
				continue // changed since the lookup: look again
			case s == http.StatusNotFound:
				out.Err = sqsrule.StaleHandle("the message does not exist")
			default:
				out.Err = entryError(mapErr(ctx, err, "change visibility"))
			}
		}
		return out, nil
	}
}
