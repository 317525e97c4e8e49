package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

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
// flight: there a handle expires with its visibility timeout. The fair version, for
// standard queues with message groups, adds the deleted messages' processing time to
// fair_time; the plain one reports whether it deleted a message with a group.
func deleteSQL(fair bool) string {
	extra := ""
	if fair {
		extra = `,` + fairTimeSQL
	}
	return `WITH q AS (SELECT id, fifo FROM queues WHERE name = $1),
h AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::int[]) AS h(id, receipt, ord)),
del AS (
	DELETE FROM messages m USING h
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY ($2::bigint[]) AND m.id = h.id AND m.receipt = h.receipt
		AND (NOT (SELECT fifo FROM q) OR m.visible_at > $5)
	RETURNING h.ord, m.group_id, m.received_at, m.visible_at
),` + fifoGroupsReadySQL("del", "$5") + extra + `
SELECT q.id, q.fifo, coalesce((SELECT array_agg(ord) FROM del), '{}'),
	NOT q.fifo AND EXISTS (SELECT 1 FROM del WHERE group_id IS NOT NULL) FROM q`
}

var (
	plainDeleteSQL = deleteSQL(false)
	fairDeleteSQL  = deleteSQL(true)
)

// maxMergedDeletes bounds the receipt handles of one delete statement.
const maxMergedDeletes = 100

// DeleteMessages deletes by receipt handle in one statement. Deletes from a standard
// queue are merged with concurrent ones (see batcher); a FIFO delete also updates its
// groups' rows, and runs alone so that it locks no more of them than it needs.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	if isFIFO(req.Name) {
		return d.deleteOnce(ctx, req)
	}
	calls := make([]timedDelete, len(req.Entries))
	for i, e := range req.Entries {
		calls[i] = timedDelete{DeleteEntry: e, now: req.Now}
	}
	res, err := d.deletes.do(ctx, req.Name, calls)
	return drivers.BatchResult{Entries: res}, err
}

// timedDelete is one entry of a standard delete waiting to be merged: the time only
// measures processing time for fair queues, so merged deletes run at the latest.
type timedDelete struct {
	drivers.DeleteEntry
	now time.Time
}

func (d *Driver) deleteMerged(ctx context.Context, queue string, calls []timedDelete) ([]drivers.EntryResult, error) {
	req := drivers.DeleteMessagesRequest{Name: queue, Entries: make([]drivers.DeleteEntry, len(calls))}
	for i, c := range calls {
		req.Entries[i] = c.DeleteEntry
		if c.now.After(req.Now) {
			req.Now = c.now
		}
	}
	res, err := d.deleteOnce(ctx, req)
	return res.Entries, err
}

func (d *Driver) deleteOnce(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	errs := make([]*drivers.Error, n)
	p := d.parseHandles(n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
	var queueID int32
	var fifo, grouped bool
	var deleted []int32
	st := plainDeleteSQL
	if d.fair.grouped(req.Name) {
		st = fairDeleteSQL
	}
	err := d.pool.QueryRow(ctx, st, req.Name, p.ids, p.tokens, p.ords, req.Now).Scan(&queueID, &fifo, &deleted, &grouped)
	if err == pgx.ErrNoRows {
		return drivers.BatchResult{}, notFound(req.Name)
	}
	if err != nil {
		return drivers.BatchResult{}, mapErr(ctx, err, "delete from "+req.Name)
	}
	if grouped {
		d.fair.set(req.Name, true)
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
			errs[o] = drivers.Errorf(drivers.KindStaleReceiptHandle,
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

// changeVisibilitySQL sets new deadlines on the messages the handles name, and notifies
// other gateways when a deadline moved earlier (their waiters may have planned to wake at
// the old one). On a standard queue any handle of a message that still exists applies,
// as in SQS (an older receive's, or the current one after its timeout passed); on a FIFO
// queue only the current handle of an in-flight message (usable).
var changeVisibilitySQL = `WITH q AS (SELECT id, fifo FROM queues WHERE name = $1),
h AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::timestamptz[], $5::int[]) AS h(id, receipt, deadline, ord)),
cur AS (
	SELECT m.id, m.visible_at AS old, h.deadline, h.ord,
		coalesce(h.deadline > m.received_at + interval '12 hours', false) AS too_late,
		NOT (SELECT fifo FROM q) OR (m.receipt = h.receipt AND m.visible_at > $6) AS usable
	FROM messages m JOIN h ON m.id = h.id
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY ($2::bigint[]) FOR UPDATE OF m
),
ok AS (SELECT * FROM cur WHERE usable AND NOT too_late),
up AS (
	UPDATE messages m SET visible_at = ok.deadline FROM ok
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY (ARRAY(SELECT id FROM ok)) AND m.id = ok.id
	RETURNING ok.ord, ok.deadline < ok.old AS earlier, m.group_id
),
ch AS (SELECT group_id FROM up WHERE earlier),` + fifoGroupsReadySQL("ch", "(SELECT min(ok.deadline) FROM ok)") + `,
nt AS (SELECT pg_notify($7, $1) WHERE EXISTS (SELECT 1 FROM up WHERE earlier))
SELECT q.id, coalesce((SELECT array_agg(ord) FROM up), '{}'),
	coalesce((SELECT array_agg(ord) FROM cur WHERE NOT usable), '{}'),
	coalesce((SELECT array_agg(ord) FROM cur WHERE usable AND too_late), '{}'), (SELECT count(*) FROM nt)
FROM q`

// ChangeVisibility sets deadlines in one statement; see drivers.Driver for which
// handles apply.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	errs := make([]*drivers.Error, n)
	p := d.parseHandles(n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
	deadlines := make([]time.Time, len(p.ords))
	for k, o := range p.ords {
		deadlines[k] = req.Now.Add(time.Duration(req.Entries[o].VisibilityTimeout) * time.Second)
	}
	var queueID int32
	var changed, unusable, tooLate []int32
	var notified int64
	err := d.pool.QueryRow(ctx, changeVisibilitySQL, req.Name, p.ids, p.tokens, deadlines, p.ords, req.Now, d.channel).
		Scan(&queueID, &changed, &unusable, &tooLate, &notified)
	if err == pgx.ErrNoRows {
		return drivers.BatchResult{}, notFound(req.Name)
	}
	if err != nil {
		return drivers.BatchResult{}, mapErr(ctx, err, "change visibility in "+req.Name)
	}
	state := make([]byte, n) // 0 no such message, 1 changed, 2 FIFO handle not current, 3 past 12 h
	for _, o := range changed {
		state[o] = 1
	}
	for _, o := range unusable {
		state[o] = 2
	}
	for _, o := range tooLate {
		state[o] = 3
	}
	for k, o := range p.ords {
		switch {
		case p.queue[k] != queueID:
			errs[o] = invalidHandle(req.Entries[o].ReceiptHandle) // issued for another queue
		case state[o] == 0:
			errs[o] = drivers.Errorf(drivers.KindStaleReceiptHandle,
				"receipt handle of queue %s names no message: it was deleted", req.Name)
		case state[o] == 2:
			errs[o] = drivers.Errorf(drivers.KindStaleReceiptHandle,
				"receipt handle of queue %s has expired: the message was received again or its visibility timeout passed", req.Name)
		case state[o] == 3:
			errs[o] = drivers.Errorf(drivers.KindInvalidArgument,
				"VisibilityTimeout %d s would keep the message hidden more than 12 hours after it was received",
				req.Entries[o].VisibilityTimeout)
		}
	}
	return batchResult(n, func(i int) string { return req.Entries[i].EntryID }, errs), nil
}
