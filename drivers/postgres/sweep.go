package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// sweepMessagesSQL deletes expired messages at the head (lowest row ids, i.e. oldest
// sends) of each queue: one index probe per queue finds the queues whose oldest message
// has expired, and in those at most $2 head rows are looked at, so a pass is bounded.
const sweepMessagesSQL = `WITH c AS (
	SELECT x.queue_id, x.id FROM queues q CROSS JOIN LATERAL (
		SELECT m.queue_id, m.id, m.enqueued_at FROM messages m WHERE m.queue_id = q.id ORDER BY m.id LIMIT $2
	) x
	WHERE (SELECT h.enqueued_at FROM messages h WHERE h.queue_id = q.id ORDER BY h.id LIMIT 1)
			<= $1::timestamptz - make_interval(secs => q.retention)
		AND x.enqueued_at <= $1::timestamptz - make_interval(secs => q.retention)
	LIMIT $2
)
DELETE FROM messages m USING c WHERE m.queue_id = c.queue_id AND m.id = c.id`

// sweepGroupsSQL drops the fifo_groups rows of groups whose messages all expired and
// were swept: a claim that finds only expired messages in a group sets its ready_at to
// infinity, and nothing looks at the row again. It is safe against a send, move or
// redrive into the group at the same moment, because each of those writes the group's
// row to a finite ready_at in its own transaction: either that write comes first, and
// this delete, meeting the newer row version, finds neither its ctid nor infinity and
// keeps it; or this delete comes first, and the writer's INSERT ... ON CONFLICT waits
// for it to commit and then inserts a new row. The rows are locked in the order every
// writer of several group rows follows (sendGroupsSQL), so that a send refilling two of
// them at that moment waits for the sweep, or the sweep for it, and neither deadlocks;
// a row whose newer version is no longer at infinity drops out when its lock is granted.
const sweepGroupsSQL = `WITH cand AS (
	SELECT x.queue_id, x.group_id FROM queues q CROSS JOIN LATERAL (
		SELECT f.queue_id, f.group_id FROM fifo_groups f WHERE f.queue_id = q.id AND f.ready_at = 'infinity'
			AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = f.queue_id AND m.group_id = f.group_id)
		LIMIT $1
	) x WHERE q.fifo LIMIT $1
), locked AS (
	SELECT f.ctid FROM fifo_groups f JOIN cand c ON f.queue_id = c.queue_id AND f.group_id = c.group_id
	WHERE f.ready_at = 'infinity'
	ORDER BY f.queue_id, f.group_id COLLATE "C" FOR UPDATE OF f
)
DELETE FROM fifo_groups g WHERE g.ready_at = 'infinity' AND g.ctid = ANY (ARRAY(SELECT ctid FROM locked))`

// Sweep deletes expired messages, the rows of FIFO groups left without messages, dedup
// records and receive attempts, each at most req.Limit per call. Only one gateway sweeps
// at a time: the others return at once.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 1000
	}
	var res drivers.SweepResult
	var locked bool
	err := d.inTx(ctx, "retention sweep", func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, $2)`, d.keys.class, lockSweep).Scan(&locked); err != nil {
			return err
		}
		if !locked {
			return nil
		}
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{sweepMessagesSQL, []any{req.Now, limit}},
			{`DELETE FROM dedup WHERE ctid = ANY (ARRAY(SELECT ctid FROM dedup WHERE expires_at <= $1 LIMIT $2))`,
				[]any{req.Now, limit}},
			{`DELETE FROM receive_attempts WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM receive_attempts WHERE expires_at <= $1 LIMIT $2))`, []any{req.Now, limit}},
			// After the messages, so that groups whose last messages this pass removed go too.
			{sweepGroupsSQL, []any{limit}},
			// An hour's margin keeps rows a gateway with a slower clock still relies on.
			{`DELETE FROM watches WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM watches WHERE until <= $1::timestamptz - interval '1 hour' LIMIT $2))`,
				[]any{req.Now, limit}},
			// Processing time decayed below a nanosecond (2^-30 s) counts for nothing.
			{`DELETE FROM fair_time WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM fair_time WHERE rank < extract(epoch FROM $1::timestamptz) / 60 - 30 LIMIT $2))`,
				[]any{req.Now, limit}},
			{`DELETE FROM deleted_queues WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM deleted_queues WHERE deleted_at <= $1 LIMIT $2))`,
				[]any{req.Now.Add(-drivers.QueueNameReuseDelay), limit}},
		} {
			tag, err := tx.Exec(ctx, st.sql, st.args...)
			if err != nil {
				return err
			}
			if st.sql == sweepMessagesSQL {
				res.Deleted = int(tag.RowsAffected())
			}
			if tag.RowsAffected() >= int64(limit) {
				res.More = true
			}
		}
		return nil
	})
	if err == nil && locked && !res.More && d.vacuum {
		err = d.vacuumTables(ctx)
	}
	return res, err
}

// vacuumedTables are the tables whose rows churn with traffic: every message, receive,
// delete, FIFO group change and long poll leaves dead rows behind.
var vacuumedTables = []string{"messages", "fifo_groups", "dedup", "receive_attempts", "watches", "queues", "fair_time"}

// vacuumTables runs VACUUM (ANALYZE) on the driver's busy tables, after a whole sweep
// pass (VacuumOnSweep). VACUUM cannot run in a transaction, so it runs after the sweep's
// own; it takes no lock that blocks sends, receives or deletes. ANALYZE keeps the
// statistics fresh, on which the claim's plan depends.
func (d *Driver) vacuumTables(ctx context.Context) error {
	names := make([]string, len(vacuumedTables))
	for i, t := range vacuumedTables {
		names[i] = pgx.Identifier{d.schema, t}.Sanitize()
	}
	if _, err := d.pool.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(names, ", ")); err != nil {
		return mapErr(ctx, err, "vacuum on sweep")
	}
	return nil
}
