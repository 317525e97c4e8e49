package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func encodeAttrs(a map[string]drivers.MessageAttribute) (string, error) {
	if len(a) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(a)
	return string(b), err
}

func decodeAttrs(s string) (map[string]drivers.MessageAttribute, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var a map[string]drivers.MessageAttribute
	err := json.Unmarshal([]byte(s), &a)
	return a, err
}

func nextSeq(ctx context.Context, tx conn, queueID int64) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `UPDATE queues SET next_seq = next_seq + 1 WHERE id = ? RETURNING next_seq`, queueID).Scan(&n)
	return n, err
}

// SendMessages stores the entries in one transaction; FIFO duplicates echo the original.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	var res drivers.SendMessagesResult
	now := toNanos(req.Now)
	err := d.write(ctx, func(tx conn) error {
		res.Entries = make([]drivers.SendEntryResult, 0, len(req.Entries))
		q, err := tx.queueRow(req.Name)
		if err != nil {
			return err
		}
		if !q.fifo && len(req.Entries) > 1 {
			res.Entries, err = sendStandardBatch(ctx, tx, q, now, req.Entries)
			return err
		}
		for _, e := range req.Entries {
			r, err := d.sendOne(ctx, tx, q, now, e)
			if err != nil {
				return err
			}
			res.Entries = append(res.Entries, r)
		}
		return nil
	})
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	return res, nil
}

func (d *Driver) sendOne(ctx context.Context, tx conn, q queueRow, now int64, e drivers.SendEntry) (drivers.SendEntryResult, error) {
	r := drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID}
	attrs, err := encodeAttrs(e.Attributes)
	if err != nil {
		r.Err = drivers.Errorf(drivers.KindInvalidArgument, "message attributes: %v", err)
		return r, nil
	}
	sys, err := encodeAttrs(e.SystemAttributes)
	if err != nil {
		r.Err = drivers.Errorf(drivers.KindInvalidArgument, "message system attributes: %v", err)
		return r, nil
	}
	var seq int64
	scope := ""
	if q.fifo {
		if q.attrs.DeduplicationScope == "messageGroup" {
			scope = e.MessageGroupID
		}
		var origID string
		var origSeq int64
		// sqsrule.DedupHolds, in SQL: a purge deletes the queue's records.
		err := tx.QueryRowContext(ctx, `SELECT message_id, seq FROM dedup
			WHERE queue_id = ? AND scope = ? AND dedup_id = ? AND expires_at > ?`,
			q.id, scope, e.MessageDeduplicationID, now).Scan(&origID, &origSeq)
		if err == nil {
			r.MessageID, r.SequenceNumber, r.Duplicate = origID, sqsrule.SequenceNumber(origSeq), true
			return r, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
		if seq, err = nextSeq(ctx, tx, q.id); err != nil {
			return r, err
		}
		r.SequenceNumber = sqsrule.SequenceNumber(seq)
	}
	visibleAt := now + int64(e.DelaySeconds)*int64(time.Second)
	_, err = tx.ExecContext(ctx, `INSERT INTO messages(queue_id, message_id, body, attrs, sys_attrs, sender_id,
		sent_at, enqueued_at, visible_at, group_id, dedup_id, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		q.id, e.MessageID, e.Body, attrs, sys, e.SenderID, now, now, visibleAt, e.MessageGroupID, e.MessageDeduplicationID, seq)
	if err != nil {
		return r, err
	}
	if q.fifo {
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO dedup(queue_id, scope, dedup_id, message_id, seq, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, q.id, scope, e.MessageDeduplicationID, e.MessageID, seq, toNanos(sqsrule.DedupExpiry(fromNanos(now))))
	}
	return r, err
}

// sendStandardBatch stores a standard queue's entries with one multi-row INSERT; an entry
// whose attributes cannot be encoded fails alone.
func sendStandardBatch(ctx context.Context, tx conn, q queueRow, now int64, entries []drivers.SendEntry) ([]drivers.SendEntryResult, error) {
	out := make([]drivers.SendEntryResult, len(entries))
	args := make([]any, 0, insertCols*len(entries))
	rows := 0
	for i, e := range entries {
		out[i] = drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID}
		attrs, err := encodeAttrs(e.Attributes)
		if err != nil {
			out[i].Err = drivers.Errorf(drivers.KindInvalidArgument, "message attributes: %v", err)
			continue
		}
		sys, err := encodeAttrs(e.SystemAttributes)
		if err != nil {
			out[i].Err = drivers.Errorf(drivers.KindInvalidArgument, "message system attributes: %v", err)
			continue
		}
		visibleAt := now + int64(e.DelaySeconds)*int64(time.Second)
		args = append(args, q.id, e.MessageID, e.Body, attrs, sys, e.SenderID, now, now, visibleAt,
			e.MessageGroupID, e.MessageDeduplicationID, 0)
		rows++
	}
	if rows == 0 {
		return out, nil
	}
	_, err := tx.ExecContext(ctx, insertSQL.text(rows), args...)
	return out, err
}

// insertCols is the number of columns insertQuery sets per message.
const insertCols = 12

var insertSQL = newByArity(insertQuery)

// insertQuery inserts n messages.
func insertQuery(n int) string {
	row := "(?" + strings.Repeat(", ?", insertCols-1) + ")"
	return `INSERT INTO messages(queue_id, message_id, body, attrs, sys_attrs, sender_id,
		sent_at, enqueued_at, visible_at, group_id, dedup_id, seq) VALUES ` + row + strings.Repeat(", "+row, n-1)
}
