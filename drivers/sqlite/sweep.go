package sqlite

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// defaultSweepLimit bounds one Sweep call when the request gives no limit.
const defaultSweepLimit = 1000

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
