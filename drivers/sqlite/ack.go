package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// maxInvisible is how long SQS lets a message stay invisible after one receive.
const maxInvisible = 12 * time.Hour

// handleState is what a receipt handle finds when it is looked up.
type handleState int

const (
	handleForeign  handleState = iota // not issued by this driver for this queue
	handleGone                        // issued, but the message is gone
	handleStale                       // issued, but the message was received again since
	handleExpired                     // current, but the visibility timeout has passed
	handleInFlight                    // current and in flight
)

// lookupHandle also returns when the message's latest receive happened.
func (d *Driver) lookupHandle(ctx context.Context, tx conn, q queueRow, h string, now int64) (receipt, handleState, int64, error) {
	r, ok := d.decodeHandle(h)
	if !ok || r.queueID != q.id {
		return r, handleForeign, 0, nil
	}
	var (
		token                 sql.NullString
		visibleAt, receivedAt int64
	)
	err := tx.QueryRowContext(ctx, `SELECT token, visible_at, received_at FROM messages WHERE id = ? AND queue_id = ?`, r.rowID, q.id).
		Scan(&token, &visibleAt, &receivedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, handleGone, 0, nil
	case err != nil:
		return r, handleForeign, 0, err
	case !token.Valid || token.String != r.token:
		return r, handleStale, receivedAt, nil
	case visibleAt <= now:
		return r, handleExpired, receivedAt, nil
	}
	return r, handleInFlight, receivedAt, nil
}

// DeleteMessages deletes by receipt handle; see drivers.Driver for stale-handle rules.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	now := toNanos(req.Now)
	err := d.write(ctx, func(tx conn) error {
		res.Entries = make([]drivers.EntryResult, 0, len(req.Entries))
		q, err := tx.queueRow(req.Name)
		if err != nil {
			return err
		}
		for _, e := range req.Entries {
			out := drivers.EntryResult{EntryID: e.EntryID}
			r, state, _, err := d.lookupHandle(ctx, tx, q, e.ReceiptHandle, now)
			if err != nil {
				return err
			}
			switch {
			case state == handleForeign:
				out.Err = invalidHandle("not issued for this queue")
			case state == handleInFlight, state == handleExpired && !q.fifo:
				if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, r.rowID); err != nil {
					return err
				}
			case q.fifo:
				out.Err = staleHandle("the receipt handle has expired: the message was deleted, received again or its visibility timeout passed")
			}
			res.Entries = append(res.Entries, out)
		}
		return nil
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return res, nil
}

// ChangeVisibility moves visibility deadlines; see drivers.Driver for which handles apply.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	now := toNanos(req.Now)
	err := d.write(ctx, func(tx conn) error {
		res.Entries = make([]drivers.EntryResult, 0, len(req.Entries))
		q, err := tx.queueRow(req.Name)
		if err != nil {
			return err
		}
		for _, e := range req.Entries {
			out := drivers.EntryResult{EntryID: e.EntryID}
			r, state, receivedAt, err := d.lookupHandle(ctx, tx, q, e.ReceiptHandle, now)
			if err != nil {
				return err
			}
			deadline := now + int64(e.VisibilityTimeout)*int64(time.Second)
			switch {
			case state == handleForeign:
				out.Err = invalidHandle("not issued for this queue")
			case state == handleGone:
				out.Err = staleHandle("the message does not exist")
			case q.fifo && state != handleInFlight:
				out.Err = staleHandle("the receipt handle has expired: the message was received again or its visibility timeout passed")
			// received_at is 0 for messages claimed before schema version 2: no cap known.
			case receivedAt != 0 && deadline > receivedAt+int64(maxInvisible):
				out.Err = drivers.Errorf(drivers.KindInvalidArgument,
					"visibility timeout %d s would keep the message invisible past 12 hours from its receive at %s",
					e.VisibilityTimeout, fromNanos(receivedAt).Format(time.RFC3339))
			default:
				if _, err := tx.ExecContext(ctx, `UPDATE messages SET visible_at = ? WHERE id = ?`, deadline, r.rowID); err != nil {
					return err
				}
			}
			res.Entries = append(res.Entries, out)
		}
		return nil
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return res, nil
}
