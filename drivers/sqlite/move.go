package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// MoveMessages moves up to req.Limit visible messages out of req.Source in one transaction.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	var res drivers.MoveMessagesResult
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	err := d.write(ctx, func(tx conn) error {
		res = drivers.MoveMessagesResult{}
		src, _, err := loadQueue(ctx, tx, req.Source)
		if err != nil {
			return err
		}
		if err := checkTaskStep(ctx, tx, req.Task); err != nil {
			return err
		}
		var fixed *queueRow
		if req.Destination != "" {
			dst, _, err := loadQueue(ctx, tx, req.Destination)
			if err != nil {
				return err
			}
			fixed = &dst
		}
		rows, err := movable(ctx, tx, src, req, limit+1)
		if err != nil {
			return err
		}
		dests := map[string]queueRow{}
		for i, m := range rows {
			if i == limit {
				res.More = true
				break
			}
			dst, err := destinationOf(ctx, tx, fixed, dests, m)
			if err != nil {
				return err
			}
			if err := moveMessage(ctx, tx, src, dst, m, toNanos(req.Now), false); err != nil {
				return err
			}
			res.Moved++
		}
		return countTaskStep(ctx, tx, req.Task, res.Moved)
	})
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	return res, nil
}

// checkTaskStep fails with KindFailedPrecondition unless step (if any) is of a task that
// is running and owned by the step's runner: one that was cancelled or adopted moves
// nothing more.
func checkTaskStep(ctx context.Context, tx conn, step *drivers.MoveTaskStep) error {
	if step == nil {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM move_tasks WHERE handle = ? AND owner = ? AND status = 'RUNNING'`,
		step.Handle, step.Owner).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is not running under %s: cancelled, finished or adopted by another gateway", step.Handle, step.Owner)
	}
	return nil
}

// countTaskStep adds a step's moves to its task and renews the runner's lease, in the
// move's transaction.
func countTaskStep(ctx context.Context, tx conn, step *drivers.MoveTaskStep, moved int) error {
	if step == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE move_tasks SET moved = moved + ?, lease_until = ? WHERE handle = ?`,
		moved, toNanos(step.LeaseUntil), step.Handle)
	return err
}

// movable lists visible messages in sequence (FIFO) or arrival order. Without a fixed
// destination only messages whose DeadLetterSource queue still exists qualify, so that
// More does not stay true forever because of messages that have nowhere to go.
func movable(ctx context.Context, tx conn, src queueRow, req drivers.MoveMessagesRequest, n int) ([]msgRow, error) {
	order, filter := "m.id", ""
	if src.fifo {
		order, filter = "m.seq", "AND m.seq > 0 " // the partial sequence index
	}
	if req.Destination == "" {
		filter += `AND m.dlq_source <> '' AND EXISTS (SELECT 1 FROM queues d WHERE d.name = m.dlq_source)`
	}
	return readMsgs(ctx, tx, `SELECT `+msgCols+` FROM messages m
		WHERE m.queue_id = ? AND m.visible_at <= ? `+filter+` ORDER BY `+order+` LIMIT ?`,
		src.id, toNanos(req.Now), n)
}

func destinationOf(ctx context.Context, tx conn, fixed *queueRow, cache map[string]queueRow, m msgRow) (queueRow, error) {
	if fixed != nil {
		return *fixed, nil
	}
	if q, ok := cache[m.dlqSource]; ok {
		return q, nil
	}
	q, _, err := loadQueue(ctx, tx, m.dlqSource)
	if err != nil {
		return q, err
	}
	cache[m.dlqSource] = q
	return q, nil
}

// moveMessage moves m from src to dst. A redrive to the dead-letter queue keeps the
// message and its delivery history and records the source queue; its enqueue time is
// sqsrule.DLQEnqueueTime, and a FIFO message's deduplication id becomes its message id.
// A move task makes a new message: new MessageID, send and enqueue time Now, fresh
// delivery state.
func moveMessage(ctx context.Context, tx conn, src, dst queueRow, m msgRow, now int64, redrive bool) error {
	var seq int64
	if dst.fifo {
		var err error
		if seq, err = nextSeq(ctx, tx, dst.id); err != nil {
			return err
		}
	}
	n := m
	if redrive {
		n.dlqSource = src.name
		n.enqueuedAt = sqsrule.DLQEnqueueTime(dst.fifo, m.enqueuedAt, now)
		if dst.fifo {
			n.dedupID = m.messageID
		}
	} else {
		n.messageID = uuid.NewString()
		n.sentAt, n.enqueuedAt = now, now
		n.receiveCount, n.firstReceivedAt, n.dlqSource = 0, 0, ""
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages(queue_id, message_id, body, attrs, sys_attrs, sender_id,
		sent_at, enqueued_at, visible_at, receive_count, first_received_at, group_id, dedup_id, seq, dlq_source)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		dst.id, n.messageID, n.body, n.attrs, n.sysAttrs, n.senderID, n.sentAt, n.enqueuedAt, now,
		n.receiveCount, n.firstReceivedAt, n.groupID, n.dedupID, seq, n.dlqSource); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, m.id)
	return err
}
