package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
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
// In a batch, the current handles of messages in flight, the common case, are deleted by
// one statement; the other entries are looked up one by one and judged by sqsrule.Delete.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	now := toNanos(req.Now)
	err := d.write(ctx, func(tx conn) error {
		res.Entries = make([]drivers.EntryResult, len(req.Entries))
		q, err := tx.queueRow(req.Name)
		if err != nil {
			return err
		}
		done := make([]bool, len(req.Entries))
		if len(req.Entries) > 1 { // for one entry, the lookup and delete below cost less
			if done, err = d.deleteInFlight(ctx, tx, q, req.Entries, now); err != nil {
				return err
			}
		}
		for i, e := range req.Entries {
			res.Entries[i].EntryID = e.EntryID
			if done[i] {
				continue
			}
			r, state, receivedAt, err := d.lookupHandle(ctx, tx, q, e.ReceiptHandle, now)
			if err != nil {
				return err
			}
			remove, rerr := sqsrule.Delete(state, q.fifo)
			res.Entries[i].Err = rerr
			if remove {
				var group string
				if err := tx.QueryRowContext(ctx, `DELETE FROM messages WHERE id = ? RETURNING group_id`, r.rowID).Scan(&group); err != nil {
					return err
				}
				if !q.fifo && state == sqsrule.HandleInFlight {
					d.processed(q.id, group, receivedAt, now)
				}
			}
		}
		return nil
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return res, nil
}

// deleteInFlight deletes, in one statement, the messages whose entry holds their current
// handle while they are in flight (the state in which sqsrule.Delete removes a message
// on any queue), and reports which entries it deleted. A message named by several
// entries counts for the first.
func (d *Driver) deleteInFlight(ctx context.Context, tx conn, q queueRow, entries []drivers.DeleteEntry, now int64) ([]bool, error) {
	done := make([]bool, len(entries))
	first := make(map[int64]int, len(entries)) // row id → the first entry naming it
	var ids, tokens []any
	for i, e := range entries {
		r, ok := d.decodeHandle(e.ReceiptHandle)
		if !ok || r.queueID != q.id {
			continue
		}
		if _, seen := first[r.rowID]; seen {
			continue
		}
		first[r.rowID] = i
		ids = append(ids, r.rowID)
		tokens = append(tokens, r.rowID, r.token)
	}
	if len(ids) == 0 {
		return done, nil
	}
	n := len(ids)
	args := append(append(append(make([]any, 0, 2+3*n), q.id, now), ids...), tokens...)
	rows, err := tx.QueryContext(ctx, deleteInFlightSQL.text(n), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, receivedAt int64
		var group string
		if err := rows.Scan(&id, &group, &receivedAt); err != nil {
			return nil, err
		}
		done[first[id]] = true
		if !q.fifo {
			d.processed(q.id, group, receivedAt, now)
		}
	}
	return done, rows.Err()
}

var deleteInFlightSQL = newByArity(deleteInFlightQuery)

// deleteInFlightQuery deletes, among n row ids, those of the queue that are in flight
// and hold the token paired with their id. Arguments: queue id, now, the n ids, then n
// (id, token) pairs.
func deleteInFlightQuery(n int) string {
	var b strings.Builder
	// The unary + keeps the planner on the row ids: left to itself it may scan the
	// queue's in-flight index instead.
	b.WriteString(`DELETE FROM messages WHERE +queue_id = ? AND +visible_at > ? AND id IN (?`)
	b.WriteString(strings.Repeat(", ?", n-1))
	b.WriteString(`) AND token = CASE id`)
	b.WriteString(strings.Repeat(" WHEN ? THEN ?", n))
	b.WriteString(` END RETURNING id, group_id, received_at`)
	return b.String()
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
