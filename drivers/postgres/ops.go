package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// parsedHandles splits a batch into well-formed handles (with their entry index) and
// per-entry errors for the others.
type parsedHandles struct {
	ids    []int64
	tokens [][16]byte // uuid, sent in binary
	ords   []int32
	queue  []int32
}

func parseHandles(n int, get func(i int) string, errs []*drivers.Error) parsedHandles {
	var p parsedHandles
	for i := 0; i < n; i++ {
		h, err := parseHandle(get(i))
		if err != nil {
			errs[i] = err.(*drivers.Error)
			continue
		}
		p.ids = append(p.ids, h.id)
		p.tokens = append(p.tokens, h.token)
		p.ords = append(p.ords, int32(i))
		p.queue = append(p.queue, h.queueID)
	}
	return p
}

// fifoGroupsReadySQL makes the FIFO groups of the rows in CTE src (a group_id column)
// ready no later than at: a delete or an earlier deadline may unblock them. The rows are
// locked in group order first, so writers of several groups cannot deadlock; a ready_at
// that comes too early costs the claim that finds it one look at the group.
func fifoGroupsReadySQL(src, at string) string {
	return `
gl AS (
	SELECT g.group_id FROM fifo_groups g
	WHERE (SELECT fifo FROM q) AND g.queue_id = (SELECT id FROM q) AND g.group_id IN (SELECT group_id FROM ` + src + `)
	ORDER BY g.group_id COLLATE "C" FOR UPDATE
),
gu AS (
	UPDATE fifo_groups g SET ready_at = least(g.ready_at, ` + at + `::timestamptz)
	WHERE g.queue_id = (SELECT id FROM q) AND g.group_id IN (SELECT group_id FROM gl)
	RETURNING 1
)`
}

// deleteSQL deletes by (row, token). FIFO queues also require the message to be in
// flight: there a handle expires with its visibility timeout.
var deleteSQL = `WITH q AS (SELECT id, fifo FROM queues WHERE name = $1),
h AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::int[]) AS h(id, receipt, ord)),
del AS (
	DELETE FROM messages m USING h
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY ($2::bigint[]) AND m.id = h.id AND m.receipt = h.receipt
		AND (NOT (SELECT fifo FROM q) OR m.visible_at > $5)
	RETURNING h.ord, m.group_id
),` + fifoGroupsReadySQL("del", "$5") + `
SELECT q.id, q.fifo, coalesce((SELECT array_agg(ord) FROM del), '{}') FROM q`

// maxMergedDeletes bounds the receipt handles of one delete statement.
const maxMergedDeletes = 100

// DeleteMessages deletes by receipt handle in one statement. Deletes from a standard
// queue are merged with concurrent ones (see batcher); a FIFO delete also updates its
// groups' rows, and runs alone so that it locks no more of them than it needs.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	if isFIFO(req.Name) {
		return d.deleteOnce(ctx, req)
	}
	res, err := d.deletes.do(ctx, req.Name, req.Entries)
	return drivers.BatchResult{Entries: res}, err
}

func (d *Driver) deleteMerged(ctx context.Context, queue string, entries []drivers.DeleteEntry) ([]drivers.EntryResult, error) {
	// A standard delete does not depend on the time.
	res, err := d.deleteOnce(ctx, drivers.DeleteMessagesRequest{Name: queue, Entries: entries})
	return res.Entries, err
}

func (d *Driver) deleteOnce(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	errs := make([]*drivers.Error, n)
	p := parseHandles(n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
	var queueID int32
	var fifo bool
	var deleted []int32
	err := d.pool.QueryRow(ctx, deleteSQL, req.Name, p.ids, p.tokens, p.ords, req.Now).Scan(&queueID, &fifo, &deleted)
	if err == pgx.ErrNoRows {
		return drivers.BatchResult{}, notFound(req.Name)
	}
	if err != nil {
		return drivers.BatchResult{}, mapErr(ctx, err, "delete from "+req.Name)
	}
	done := make([]bool, n)
	for _, o := range deleted {
		done[o] = true
	}
	for k, o := range p.ords {
		switch {
		case p.queue[k] != queueID:
			errs[o] = invalidHandle(req.Entries[o].ReceiptHandle) // issued for another queue
		case fifo && !done[o]:
			errs[o] = drivers.Errorf(drivers.KindInvalidReceiptHandle,
				"receipt handle of queue %s has expired: the message was deleted, received again or its visibility timeout passed", req.Name)
		}
	}
	return batchResult(n, func(i int) string { return req.Entries[i].EntryID }, errs), nil
}

func batchResult(n int, id func(int) string, errs []*drivers.Error) drivers.BatchResult {
	res := drivers.BatchResult{Entries: make([]drivers.EntryResult, n)}
	for i := range res.Entries {
		res.Entries[i] = drivers.EntryResult{EntryID: id(i), Err: errs[i]}
	}
	return res
}

// changeVisibilitySQL sets new deadlines on in-flight messages whose token matches, and
// notifies other gateways when a deadline moved earlier (their waiters may have planned
// to wake at the old one).
var changeVisibilitySQL = `WITH q AS (SELECT id, fifo FROM queues WHERE name = $1),
h AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::timestamptz[], $5::int[]) AS h(id, receipt, deadline, ord)),
cur AS (
	SELECT m.id, m.visible_at AS old, h.deadline, h.ord, h.deadline > m.received_at + interval '12 hours' AS too_late
	FROM messages m JOIN h ON m.id = h.id AND m.receipt = h.receipt
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY ($2::bigint[]) FOR UPDATE OF m
),
up AS (
	UPDATE messages m SET visible_at = cur.deadline FROM cur
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY (ARRAY(SELECT id FROM cur WHERE old > $6))
		AND m.id = cur.id AND cur.old > $6 AND NOT cur.too_late
	RETURNING cur.ord, cur.deadline < cur.old AS earlier, m.group_id
),
ch AS (SELECT group_id FROM up WHERE earlier),` + fifoGroupsReadySQL("ch", "(SELECT min(cur.deadline) FROM cur)") + `,
nt AS (SELECT pg_notify($7, $1) WHERE EXISTS (SELECT 1 FROM up WHERE earlier))
SELECT q.id, coalesce((SELECT array_agg(ord) FROM up), '{}'),
	coalesce((SELECT array_agg(ord) FROM cur WHERE old <= $6), '{}'),
	coalesce((SELECT array_agg(ord) FROM cur WHERE old > $6 AND too_late), '{}'), (SELECT count(*) FROM nt)
FROM q`

// ChangeVisibility sets deadlines of in-flight messages in one statement.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	errs := make([]*drivers.Error, n)
	p := parseHandles(n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
	deadlines := make([]time.Time, len(p.ords))
	for k, o := range p.ords {
		deadlines[k] = req.Now.Add(time.Duration(req.Entries[o].VisibilityTimeout) * time.Second)
	}
	var queueID int32
	var changed, notInflight, tooLate []int32
	var notified int64
	err := d.pool.QueryRow(ctx, changeVisibilitySQL, req.Name, p.ids, p.tokens, deadlines, p.ords, req.Now, d.channel).
		Scan(&queueID, &changed, &notInflight, &tooLate, &notified)
	if err == pgx.ErrNoRows {
		return drivers.BatchResult{}, notFound(req.Name)
	}
	if err != nil {
		return drivers.BatchResult{}, mapErr(ctx, err, "change visibility in "+req.Name)
	}
	state := make([]byte, n) // 0 unknown handle, 1 changed, 2 not in flight, 3 past 12 h
	for _, o := range changed {
		state[o] = 1
	}
	for _, o := range notInflight {
		state[o] = 2
	}
	for _, o := range tooLate {
		state[o] = 3
	}
	for k, o := range p.ords {
		switch {
		case p.queue[k] != queueID || state[o] == 0:
			errs[o] = drivers.Errorf(drivers.KindInvalidReceiptHandle,
				"receipt handle is not the current one of a message in queue %s", req.Name)
		case state[o] == 2:
			errs[o] = drivers.Errorf(drivers.KindMessageNotInflight,
				"message in queue %s is not in flight: its visibility timeout has passed", req.Name)
		case state[o] == 3:
			errs[o] = drivers.Errorf(drivers.KindInvalidArgument,
				"VisibilityTimeout %d s would keep the message hidden more than 12 hours after it was received",
				req.Entries[o].VisibilityTimeout)
		}
	}
	return batchResult(n, func(i int) string { return req.Entries[i].EntryID }, errs), nil
}

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
	err := d.inTx(ctx, "retention sweep", func(tx pgx.Tx) error {
		var locked bool
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
	return res, err
}
