package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// lookupHandle also returns when the message's latest receive happened.
func (d *Driver) lookupHandle(ctx context.Context, tx conn, q queueRow, h string, now int64) (receipt, sqsrule.HandleState, int64, error) {
	r, ok := d.decodeHandle(h)
	if !ok || r.queueID != q.id {
		return r, sqsrule.HandleForeign, 0, nil
	}
	var (
		token                 sql.NullString
		visibleAt, receivedAt int64
	)
	err := tx.QueryRowContext(ctx, `SELECT token, visible_at, received_at FROM messages WHERE id = ? AND queue_id = ?`, r.rowID, q.id).
		Scan(&token, &visibleAt, &receivedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, sqsrule.HandleGone, 0, nil
	case err != nil:
		return r, sqsrule.HandleForeign, 0, err
	case !token.Valid || token.String != r.token:
		return r, sqsrule.HandleStale, receivedAt, nil
	case visibleAt <= now:
		return r, sqsrule.HandleExpired, receivedAt, nil
	}
	return r, sqsrule.HandleInFlight, receivedAt, nil
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
			remove, rerr := sqsrule.Delete(state, q.fifo)
			out.Err = rerr
			if remove {
				if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, r.rowID); err != nil {
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
			// received_at is 0 for messages claimed before schema version 2: no cap known.
			apply, rerr := sqsrule.ChangeVisibility(state, q.fifo, e.VisibilityTimeout, fromNanos(deadline), fromNanos(receivedAt))
			out.Err = rerr
			if apply {
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
