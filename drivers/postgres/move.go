package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// moveSQL moves visible messages to the destination, or each to its DeadLetterSource
// queue, with fresh delivery state and (FIFO) a new sequence number there, and makes
// their groups there ready. Taking visible messages out of a FIFO group never makes it
// claimable earlier, so the source's group rows need no change. A message whose
// DeadLetterSource queue is gone is no candidate, so it never takes a place in the
// LIMIT window that a movable one behind it needs.
//
// With a move task ($6, the handle, not NULL) the statement is one step of it
// (drivers.MoveMessagesRequest.Task). It first locks the task row: under READ COMMITTED
// FOR UPDATE waits for a concurrent adoption, cancel or report of the task to commit
// and returns the row as that left it; while the step holds the lock, a cancel or report
// waits for it, and an adoption pass skips the task. Only a task RUNNING under $7 (ok)
// lets messages be candidates, and tk adds what moved to its count and renews its lease
// in the same transaction. task is MATERIALIZED so that it runs once; c reads ok, so
// the task row is locked before any message is.
const moveSQL = `WITH s AS (SELECT id FROM queues WHERE name = $1),
dst AS (SELECT id FROM queues WHERE name = $2),
task AS MATERIALIZED (SELECT seq, status, owner FROM move_tasks WHERE handle = $6 FOR UPDATE),
ok AS (SELECT seq FROM task WHERE status = 'RUNNING' AND owner = $7),
c AS (
	SELECT m.ctid, m.id, coalesce((SELECT id FROM dst), (SELECT t.id FROM queues t WHERE t.name = m.dlq_source)) AS target
	FROM messages m WHERE m.queue_id = (SELECT id FROM s) AND m.visible_at <= $3
		AND ($2 <> '' OR EXISTS (SELECT 1 FROM queues t WHERE t.name = m.dlq_source))
		AND ($6::text IS NULL OR EXISTS (SELECT 1 FROM ok))
	ORDER BY m.id LIMIT $4 FOR UPDATE OF m SKIP LOCKED
),
mv AS (
	UPDATE messages m SET queue_id = c.target, id = nextval('message_seq'), visible_at = $3, receipt = NULL,
		receive_count = 0, first_received_at = NULL, dlq_source = NULL,
		message_id = gen_random_uuid()::text, sent_at = $3, enqueued_at = $3
	FROM c WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM c WHERE target IS NOT NULL)) AND m.ctid = c.ctid
	RETURNING m.queue_id, m.group_id
),
gm AS (
	INSERT INTO fifo_groups (queue_id, group_id, ready_at)
	SELECT DISTINCT mv.queue_id, mv.group_id, $3::timestamptz FROM mv JOIN queues t ON t.id = mv.queue_id
	WHERE t.fifo AND mv.group_id IS NOT NULL ORDER BY 1, 2
	ON CONFLICT (queue_id, group_id) DO UPDATE SET ready_at = least(fifo_groups.ready_at, excluded.ready_at)
	RETURNING 1
),
nt AS (SELECT pg_notify($5, t.name) FROM queues t WHERE t.id IN (SELECT queue_id FROM mv)),
tk AS (
	UPDATE move_tasks SET moved = moved + (SELECT count(*) FROM mv), lease_until = $8
	WHERE seq = (SELECT seq FROM ok)
	RETURNING 1
)
SELECT (SELECT id FROM s), (SELECT id FROM dst), (SELECT count(*) FROM mv), (SELECT count(*) FROM nt),
	(SELECT count(*) FROM tk), (SELECT status FROM task), (SELECT owner FROM task)`

// moveMoreSQL runs after moveSQL in its transaction: whether movable visible messages
// remain, wherever they are in the queue.
const moveMoreSQL = `SELECT EXISTS (SELECT 1 FROM messages m
	WHERE m.queue_id = (SELECT id FROM queues WHERE name = $1) AND m.visible_at <= $3
	AND ($2 <> '' OR EXISTS (SELECT 1 FROM queues t WHERE t.name = m.dlq_source)))`

// MoveMessages moves up to Limit visible messages in one transaction (the batch's
// implicit one) and, with req.Task, counts them in the task in that transaction.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	var handle *string
	var owner string
	var leaseUntil *time.Time
	if req.Task != nil {
		handle, owner, leaseUntil = &req.Task.Handle, req.Task.Owner, &req.Task.LeaseUntil
	}
	var srcID, dstID *int32
	var moved, notified, counted int64
	var taskStatus, taskOwner *string
	var res drivers.MoveMessagesResult
	b := &pgx.Batch{}
	b.Queue(moveSQL, req.Source, req.Destination, req.Now, limit, d.channel, handle, owner, leaseUntil).
		QueryRow(func(r pgx.Row) error {
			return r.Scan(&srcID, &dstID, &moved, &notified, &counted, &taskStatus, &taskOwner)
		})
	b.Queue(moveMoreSQL, req.Source, req.Destination, req.Now).
		QueryRow(func(r pgx.Row) error { return r.Scan(&res.More) })
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return drivers.MoveMessagesResult{}, mapErr(ctx, err, "move messages from "+req.Source)
	}
	if srcID == nil {
		return drivers.MoveMessagesResult{}, notFound(req.Source)
	}
	if req.Destination != "" && dstID == nil {
		return drivers.MoveMessagesResult{}, notFound(req.Destination)
	}
	if req.Task != nil && counted == 0 {
		return drivers.MoveMessagesResult{}, refusedStep(req.Task, taskStatus, taskOwner)
	}
	res.Moved = int(moved)
	return res, nil
}

// refusedStep says why a step of t moved nothing, from the task row as the step locked
// it (nil status: no such task).
func refusedStep(t *drivers.MoveTaskStep, status, owner *string) error {
	switch {
	case status == nil:
		return drivers.Errorf(drivers.KindFailedPrecondition, "move task %s does not exist", t.Handle)
	case *status != drivers.MoveTaskRunning:
		return drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is %s, not running", t.Handle, *status)
	default:
		return drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is run by %s, not %s", t.Handle, *owner, t.Owner)
	}
}
