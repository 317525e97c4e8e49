package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func encodeAttrs(m map[string]drivers.MessageAttribute) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, drivers.Wrap(drivers.KindInvalidArgument, err, "encode message attributes")
	}
	return b, nil
}

func decodeAttrs(b []byte) (map[string]drivers.MessageAttribute, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]drivers.MessageAttribute
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "stored message attributes")
	}
	return m, nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SendMessages stores the entries in one transaction and round trip, then has the
// notifier tell other gateways.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	if len(req.Entries) == 0 {
		return drivers.SendMessagesResult{}, nil
	}
	// Concurrent sends on a queue are merged (see batcher): standard ones into one
	// statement, FIFO ones into one transaction. Each message keeps its call's time.
	b := d.sends
	if isFIFO(req.Name) {
		b = d.fifoSends
	}
	entries := make([]timedSend, len(req.Entries))
	for i, e := range req.Entries {
		entries[i] = timedSend{now: req.Now, e: e}
	}
	res, err := b.do(ctx, req.Name, entries)
	return drivers.SendMessagesResult{Entries: res}, err
}

// isFIFO tells the queue kind from its name: SQS requires FIFO queues, and only them,
// to end in ".fifo", and the gateway enforces it.
func isFIFO(name string) bool {
	return len(name) > 5 && name[len(name)-5:] == ".fifo"
}

// sendStandardSQL stores the messages and says whether a long poll watches the queue
// (see activity.go). $2 is the latest of the merged calls' times.
const sendStandardSQL = `WITH ins AS (
	INSERT INTO messages (queue_id, message_id, body, attrs, sys_attrs, sender_id,
		sent_at, enqueued_at, visible_at, group_id, dedup_id)
	SELECT q.id, u.message_id, u.body, u.attrs, u.sys_attrs, u.sender_id, u.sent_at, u.sent_at, u.visible_at,
		u.group_id, u.dedup_id
	FROM queues q, unnest($3::text[], $4::text[], $5::bytea[], $6::bytea[], $7::text[], $8::timestamptz[],
		$9::text[], $10::text[], $14::timestamptz[]) WITH ORDINALITY
		AS u(message_id, body, attrs, sys_attrs, sender_id, visible_at, group_id, dedup_id, sent_at, ord)
	WHERE q.name = $1
	ORDER BY u.ord
	RETURNING 1
)
SELECT (SELECT count(*) FROM ins), CASE WHEN $11 THEN watched($12, $13, $1, $2) END`

// timedSend is one message of a send, with the time of the call that sent it.
type timedSend struct {
	now time.Time
	e   drivers.SendEntry
}

// Merged standard sends: at most maxMergedSends weight units per statement, where a
// message weighs one unit per started 16 KiB of body, so a statement carries at most
// 100 small messages or about 1.6 MiB.
const maxMergedSends = 100

func sendWeight(s timedSend) int { return 1 + len(s.e.Body)/(16<<10) }

// latestNow is the latest of merged calls' times: a send's watched() check compares it
// with the watches' deadlines.
func latestNow(entries []timedSend) time.Time {
	var now time.Time
	for _, s := range entries {
		if s.now.After(now) {
			now = s.now
		}
	}
	return now
}

// insertStandard stores the messages of one or more merged sends in one statement.
func (d *Driver) insertStandard(ctx context.Context, queue string, entries []timedSend) ([]drivers.SendEntryResult, error) {
	n := len(entries)
	ids, bodies, senders := make([]string, n), make([]string, n), make([]string, n)
	attrs, sys := make([][]byte, n), make([][]byte, n)
	visible, sent := make([]time.Time, n), make([]time.Time, n)
	groups, dedups := make([]*string, n), make([]*string, n)
	for i, s := range entries {
		e := s.e
		var err error
		if attrs[i], err = encodeAttrs(e.Attributes); err != nil {
			return nil, err
		}
		if sys[i], err = encodeAttrs(e.SystemAttributes); err != nil {
			return nil, err
		}
		ids[i], bodies[i], senders[i] = e.MessageID, e.Body, e.SenderID
		sent[i], visible[i] = s.now, s.now.Add(time.Duration(e.DelaySeconds)*time.Second)
		groups[i], dedups[i] = nullIfEmpty(e.MessageGroupID), nullIfEmpty(e.MessageDeduplicationID)
	}
	b := &pgx.Batch{}
	var inserted int64
	var watched *bool
	b.Queue(sendStandardSQL, queue, latestNow(entries), ids, bodies, attrs, sys, senders, visible, groups, dedups,
		!d.notifyTx, d.keys.watch, hash32(queue), sent).
		QueryRow(func(r pgx.Row) error { return r.Scan(&inserted, &watched) })
	if d.notifyTx {
		b.Queue(`SELECT pg_notify($1, $2)`, d.channel, queue)
	}
	// Statements of one batch share one implicit transaction, committed at its end.
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, mapErr(ctx, err, "send to "+queue)
	}
	if inserted == 0 {
		return nil, notFound(queue)
	}
	if watched != nil && *watched {
		d.notes.notify(queue)
	}
	res := make([]drivers.SendEntryResult, n)
	for i, s := range entries {
		res[i] = drivers.SendEntryResult{EntryID: s.e.EntryID, MessageID: s.e.MessageID}
	}
	return res, nil
}

// sendFIFOSQL stores one FIFO message unless its deduplication id is live
// (sqsrule.DedupHolds, in SQL; a purge deletes the queue's records). The dedup
// row is written first: a concurrent send of the same id waits on its unique key, so
// exactly one of them inserts the message.
const sendFIFOSQL = `WITH q AS (SELECT id, dedup_group FROM queues WHERE name = $1),
s AS (SELECT nextval('message_seq') AS seq FROM q),
dd AS (
	INSERT INTO dedup (queue_id, scope, dedup_id, message_id, seq, expires_at)
	SELECT q.id, CASE WHEN q.dedup_group THEN $3 ELSE '' END, $4, $5, s.seq, $6 FROM q, s
	ON CONFLICT (queue_id, scope, dedup_id) DO UPDATE
		SET message_id = excluded.message_id, seq = excluded.seq, expires_at = excluded.expires_at
		WHERE dedup.expires_at <= $2
	RETURNING seq
),
ins AS (
	INSERT INTO messages (queue_id, id, message_id, body, attrs, sys_attrs, sender_id, sent_at, enqueued_at,
		visible_at, group_id, dedup_id)
	SELECT q.id, dd.seq, $5, $7, $8, $9, $10, $2, $2, $11, $3, $4 FROM q, dd
	RETURNING id
)
SELECT (SELECT count(*) FROM q), (SELECT id FROM ins)`

// sendGroupsSQL inserts or updates the row of each group a FIFO send writes to, in
// group order so that writers of several groups cannot deadlock: byte order, as Go sorts
// them, which every statement that locks several group rows follows (ORDER BY group_id
// COLLATE "C"; the database's own collation may order them otherwise). Claims hold group rows
// while they work on a group, and rely on every change to a group's messages locking
// its row in the same transaction, before the change (see fifoCandidates). A message
// appended to a group with unexpired messages changes neither its head nor what is in
// flight, so ready_at stays; only a group with none ('infinity', or no row) becomes
// ready when the new message does.
const sendGroupsSQL = `INSERT INTO fifo_groups (queue_id, group_id, ready_at)
	SELECT q.id, u.g, u.t FROM queues q, unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS u(g, t, ord)
	WHERE q.name = $1 AND q.fifo ORDER BY u.ord
	ON CONFLICT (queue_id, group_id) DO UPDATE SET ready_at = CASE
		WHEN fifo_groups.ready_at = 'infinity' THEN excluded.ready_at ELSE fifo_groups.ready_at END`

// dedupLookupSQL reads the live record after sendFIFOSQL, in a new snapshot, so it also
// sees a record committed by a concurrent send that won the race.
const dedupLookupSQL = `SELECT d.message_id, d.seq FROM dedup d JOIN queues q ON q.id = d.queue_id
	WHERE q.name = $1 AND d.scope = CASE WHEN q.dedup_group THEN $2 ELSE '' END AND d.dedup_id = $3`

// seqString renders a sequence number as SQS does: 20 decimal digits.
func seqString(n int64) string { return fmt.Sprintf("%020d", n) }

// maxMergedFIFOSends bounds the messages of merged FIFO sends in one transaction (each
// takes two statements of its batch).
const maxMergedFIFOSends = 50

// insertFIFO stores the messages of one or more merged FIFO sends in one transaction:
// with many message groups, sends rarely share a group, and one commit serves them all.
func (d *Driver) insertFIFO(ctx context.Context, queue string, entries []timedSend) ([]drivers.SendEntryResult, error) {
	n := len(entries)
	res := make([]drivers.SendEntryResult, n)
	b := &pgx.Batch{}
	// Lock each message group before taking sequence numbers, so commits within a group
	// happen in sequence order and a receiver never sees a later message before an
	// earlier one has committed. Sorted keys keep concurrent batches deadlock-free.
	var keys []int64
	for _, s := range entries {
		keys = append(keys, d.keys.group(queue, s.e.MessageGroupID))
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, k)
	}
	// Then each group's fifo_groups row, in group order, before any message: see
	// sendGroupsSQL.
	ready := map[string]time.Time{}
	for _, s := range entries {
		e := s.e
		if e.MessageGroupID == "" || e.MessageDeduplicationID == "" {
			continue
		}
		v := s.now.Add(time.Duration(e.DelaySeconds) * time.Second)
		if t, ok := ready[e.MessageGroupID]; !ok || v.Before(t) {
			ready[e.MessageGroupID] = v
		}
	}
	if len(ready) > 0 {
		groups := make([]string, 0, len(ready))
		for g := range ready {
			groups = append(groups, g)
		}
		slices.Sort(groups)
		times := make([]time.Time, len(groups))
		for i, g := range groups {
			times[i] = ready[g]
		}
		b.Queue(sendGroupsSQL, queue, groups, times)
	}
	type outcome struct {
		queueFound  int64
		insertedSeq *int64
		origID      string
		origSeq     int64
	}
	outs := make([]outcome, n)
	for i, s := range entries {
		e := s.e
		res[i].EntryID = e.EntryID
		if e.MessageDeduplicationID == "" || e.MessageGroupID == "" {
			res[i].Err = drivers.Errorf(drivers.KindInvalidArgument,
				"FIFO queue %s needs MessageGroupId and a deduplication id", queue)
			continue
		}
		attrs, err := encodeAttrs(e.Attributes)
		if err != nil {
			return nil, err
		}
		sys, err := encodeAttrs(e.SystemAttributes)
		if err != nil {
			return nil, err
		}
		visible := s.now.Add(time.Duration(e.DelaySeconds) * time.Second)
		o := &outs[i]
		b.Queue(sendFIFOSQL, queue, s.now, e.MessageGroupID, e.MessageDeduplicationID, e.MessageID,
			sqsrule.DedupExpiry(s.now), e.Body, attrs, sys, e.SenderID, visible).
			QueryRow(func(r pgx.Row) error { return r.Scan(&o.queueFound, &o.insertedSeq) })
		b.Queue(dedupLookupSQL, queue, e.MessageGroupID, e.MessageDeduplicationID).
			QueryRow(func(r pgx.Row) error {
				err := r.Scan(&o.origID, &o.origSeq)
				if err == pgx.ErrNoRows {
					return nil // queue missing; reported below
				}
				return err
			})
	}
	watched := false
	if d.notifyTx {
		b.Queue(`SELECT pg_notify($1, $2)`, d.channel, queue)
	} else {
		b.Queue(`SELECT watched($1, $2, $3, $4)`, d.keys.watch, hash32(queue), queue, latestNow(entries)).
			QueryRow(func(r pgx.Row) error { return r.Scan(&watched) })
	}
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, mapErr(ctx, err, "send to "+queue)
	}
	for i, s := range entries {
		if res[i].Err != nil {
			continue
		}
		o := outs[i]
		if o.queueFound == 0 {
			return nil, notFound(queue)
		}
		if o.insertedSeq != nil && watched {
			d.notes.notify(queue)
		}
		r := &res[i]
		if o.insertedSeq != nil {
			r.MessageID, r.SequenceNumber = s.e.MessageID, seqString(*o.insertedSeq)
		} else {
			r.MessageID, r.SequenceNumber, r.Duplicate = o.origID, seqString(o.origSeq), true
		}
	}
	return res, nil
}
