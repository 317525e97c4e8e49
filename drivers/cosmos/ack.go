package cosmos

import (
	"context"
	"net/http"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// maxInvisible is how long SQS lets a message stay invisible after one receive.
const maxInvisible = 12 * time.Hour

type handleState int

const (
	handleForeign  handleState = iota // not issued by this driver for this queue
	handleGone                        // issued, but the message is gone (deleted, moved or purged)
	handleStale                       // issued, but the message was received again since
	handleExpired                     // current, but the visibility timeout has passed
	handleInFlight                    // current and in flight
)

// lookupHandle reads the message a handle names and says what the handle is now.
func (d *Driver) lookupHandle(ctx context.Context, op string, q queueDoc, h string, now int64) (msgDoc, handleState, error) {
	var m msgDoc
	r, ok := d.decodeHandle(h)
	if !ok || r.inc != q.Inc {
		return m, handleForeign, nil
	}
	etag, found, err := d.readItem(ctx, op, q.pk(), msgItemID(r.mid), &m)
	if err != nil {
		return m, handleForeign, err
	}
	m.ETag = etag
	switch {
	case !found || m.Gen < q.Gen:
		return m, handleGone, nil
	case m.Tok != r.tok:
		return m, handleStale, nil
	case m.Vis <= now:
		return m, handleExpired, nil
	}
	return m, handleInFlight, nil
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
		switch {
		case state == handleForeign:
			out.Err = invalidHandle("not issued for this queue")
		case state == handleInFlight, state == handleExpired && !q.Attrs.FifoQueue:
			err := d.remove(ctx, "DeleteMessages", q.pk(), m.ID, m.ETag)
			switch s := statusOf(err); {
			case err == nil, s == http.StatusNotFound:
			case s == http.StatusPreconditionFailed && attempt < casAttempts:
				continue // changed since the lookup: look again
			default:
				out.Err = entryError(mapErr(ctx, err, "delete"))
			}
		case q.Attrs.FifoQueue:
			out.Err = staleHandle("the receipt handle has expired: the message was deleted, received again or its visibility timeout passed")
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
		switch {
		case state == handleForeign:
			out.Err = invalidHandle("not issued for this queue")
		case state == handleGone:
			out.Err = staleHandle("the message does not exist")
		case q.Attrs.FifoQueue && state != handleInFlight:
			out.Err = staleHandle("the receipt handle has expired: the message was received again or its visibility timeout passed")
		case deadline > m.Recv+maxInvisible.Milliseconds():
			out.Err = drivers.Errorf(drivers.KindInvalidArgument,
				"visibility timeout %d s would keep the message invisible past 12 hours from its receive at %s",
				e.VisibilityTimeout, fromMS(m.Recv).Format(time.RFC3339))
		default:
			etag := m.ETag
			m.Vis, m.ETag = deadline, ""
			_, err := d.replace(ctx, "ChangeVisibility", q.pk(), m.ID, etag, m)
			switch s := statusOf(err); {
			case err == nil:
			case s == http.StatusPreconditionFailed && attempt < casAttempts:
				continue // changed since the lookup: look again
			case s == http.StatusNotFound:
				out.Err = staleHandle("the message does not exist")
			default:
				out.Err = entryError(mapErr(ctx, err, "change visibility"))
			}
		}
		return out, nil
	}
}
