package sqlite

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// defaultSweepLimit bounds one Sweep call when the request gives no limit.
const defaultSweepLimit = 1000

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
		return nil
	})
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	return res, nil
}

// movable lists visible messages in sequence (FIFO) or arrival order. Without a fixed
// destination only messages whose DeadLetterSource queue still exists qualify, so that
// More does not stay true forever because of messages that have nowhere to go.
func movable(ctx context.Context, tx conn, src queueRow, req drivers.MoveMessagesRequest, n int) ([]msgRow, error) {
	order := "m.id"
	if src.fifo {
		order = "m.seq"
	}
	filter := ""
	if req.Destination == "" {
		filter = `AND m.dlq_source <> '' AND EXISTS (SELECT 1 FROM queues d WHERE d.name = m.dlq_source)`
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+msgCols+` FROM messages m
		WHERE m.queue_id = ? AND m.visible_at <= ? `+filter+` ORDER BY `+order+` LIMIT ?`,
		src.id, toNanos(req.Now), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []msgRow
	for rows.Next() {
		m, err := scanMsg(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
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

// Sweep deletes expired messages, then expired deduplication and receive-attempt records,
// at most req.Limit rows in all.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	var res drivers.SweepResult
	limit := req.Limit
	if limit <= 0 {
		limit = defaultSweepLimit
	}
	now := toNanos(req.Now)
	err := d.write(ctx, func(tx conn) error {
		res = drivers.SweepResult{}
		// One statement for all queues: per queue, a range of the enqueue-time index.
		if err := sweepStep(ctx, tx, &res, limit, `DELETE FROM messages WHERE id IN
			(SELECT m.id FROM queues q JOIN messages m INDEXED BY messages_enqueued
				ON m.queue_id = q.id AND m.enqueued_at <= ?1 - q.retention_ns LIMIT ?2)`, now); err != nil {
			return err
		}
		if err := sweepStep(ctx, tx, &res, limit, `DELETE FROM dedup WHERE rowid IN
			(SELECT rowid FROM dedup WHERE expires_at <= ? LIMIT ?)`, now); err != nil {
			return err
		}
		if err := sweepStep(ctx, tx, &res, limit, `DELETE FROM receive_attempts WHERE rowid IN
			(SELECT rowid FROM receive_attempts WHERE expires_at <= ? LIMIT ?)`, now); err != nil {
			return err
		}
		return sweepStep(ctx, tx, &res, limit, `DELETE FROM deleted_queues WHERE rowid IN
			(SELECT rowid FROM deleted_queues WHERE deleted_at <= ? LIMIT ?)`, toNanos(req.Now.Add(-drivers.QueueNameReuseDelay)))
	})
	if err != nil {
		return drivers.SweepResult{}, err
	}
	return res, nil
}

// sweepStep runs one bounded delete with the remaining budget appended as its last
// argument. When the budget is spent, More is set and the step is skipped.
func sweepStep(ctx context.Context, tx conn, res *drivers.SweepResult, limit int, query string, args ...any) error {
	left := limit - res.Deleted
	if left <= 0 {
		res.More = true
		return nil
	}
	r, err := tx.ExecContext(ctx, query, append(args, left)...)
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	res.Deleted += int(n)
	if int(n) == left {
		res.More = true // the budget ran out exactly: there may be more
	}
	return nil
}

// AwaitActivity is unsupported (drivers.ActivityLocal): one process owns the database,
// so the gateway already sees every write.
func (d *Driver) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "sqlite: one gateway owns the database; there is no other instance's activity to await")
}

// WatchActivity is unsupported (drivers.ActivityLocal), as AwaitActivity is.
func (d *Driver) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "sqlite: one gateway owns the database; there is no other instance's activity to watch")
}

// Metrics returns nothing: the driver has no series of its own.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) { return nil, nil }
