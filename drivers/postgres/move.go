package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// moveSQL moves visible messages to the destination, or each to its DeadLetterSource
// queue, with fresh delivery state and (FIFO) a new sequence number there, and makes
// their groups there ready. Taking visible messages out of a FIFO group never makes it
// claimable earlier, so the source's group rows need no change.
const moveSQL = `WITH s AS (SELECT id FROM queues WHERE name = $1),
dst AS (SELECT id FROM queues WHERE name = $2),
c AS (
	SELECT m.ctid, m.id, coalesce((SELECT id FROM dst), (SELECT t.id FROM queues t WHERE t.name = m.dlq_source)) AS target
	FROM messages m WHERE m.queue_id = (SELECT id FROM s) AND m.visible_at <= $3
		AND ($2 <> '' OR EXISTS (SELECT 1 FROM queues t WHERE t.name = m.dlq_source))
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
nt AS (SELECT pg_notify($5, t.name) FROM queues t WHERE t.id IN (SELECT queue_id FROM mv))
SELECT (SELECT id FROM s), (SELECT id FROM dst), (SELECT count(*) FROM mv), (SELECT count(*) FROM nt)`

const moveMoreSQL = `SELECT EXISTS (SELECT 1 FROM messages m
	WHERE m.queue_id = (SELECT id FROM queues WHERE name = $1) AND m.visible_at <= $3
	AND ($2 <> '' OR EXISTS (SELECT 1 FROM queues t WHERE t.name = m.dlq_source)))`

// MoveMessages moves up to Limit visible messages in one transaction.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	var srcID, dstID *int32
	var moved, notified int64
	var res drivers.MoveMessagesResult
	b := &pgx.Batch{}
	b.Queue(moveSQL, req.Source, req.Destination, req.Now, limit, d.channel).
		QueryRow(func(r pgx.Row) error { return r.Scan(&srcID, &dstID, &moved, &notified) })
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
	res.Moved = int(moved)
	return res, nil
}
