package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Claim candidates, as CTEs ending in c(ctid, id, receive_count): visible, unexpired
// messages of the queue. The queue id is a scalar subquery, not a join, so the planner
// reads the index in order and stops after LIMIT rows instead of sorting the backlog.
//
// Standard queues take the oldest-visible first and skip rows other claims hold; on a
// queue with message groups, unless some group is noisy (fairCandidates, see fair.go).
//
// FIFO claims work group by group, and a group belongs to whoever holds its row in
// fifo_groups. The claim's first statement (lockGroupsSQL) locks, with SKIP LOCKED, the
// rows of groups whose ready_at has come, and names them in a transaction-local setting;
// the claim statement then runs on a snapshot taken after those locks. Every
// transaction that changes a group's messages also updates (or inserts) the group's row
// before committing, so for the groups it holds the claim's snapshot is current. Per
// group it reads the head (first unexpired message) and, when the head is visible and
// nothing of the group is in flight, the following messages up to the first one still
// hidden (the run of sqsrule.RunNext), all by the (queue_id, group_id, id) index: the cost depends on the groups
// locked, not on the backlog. Then it writes each locked group's ready_at: the new
// deadline where it claimed, else the exact earliest moment the group may be claimable
// (which corrects the early values other writers leave), and it deletes the rows of
// groups without messages. Sends take their group's advisory lock before their sequence
// number, so no earlier message of a group can commit after a later one is seen.
const (
	fifoCandidates = `grp AS (
	SELECT t.group_id, t.ord FROM unnest(current_setting('anysqs.claim_groups')::text[]) WITH ORDINALITY AS t(group_id, ord)
),
heads AS (
	SELECT h.id, grp.group_id, grp.ord, coalesce((SELECT min(b.id) FROM messages b
		WHERE b.queue_id = (SELECT id FROM q) AND b.group_id = grp.group_id AND b.id > h.id
			AND b.visible_at > $2 AND b.enqueued_at > (SELECT cutoff FROM q)), 9223372036854775807) AS stop
	FROM grp CROSS JOIN LATERAL (
		SELECT m.id, m.visible_at FROM messages m
		WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = grp.group_id AND m.enqueued_at > (SELECT cutoff FROM q)
		ORDER BY m.id LIMIT 1) h
	WHERE h.visible_at <= $2
),
followers AS (
	SELECT f.id, h.ord FROM heads h CROSS JOIN LATERAL (
		SELECT f.id FROM messages f
		WHERE f.queue_id = (SELECT id FROM q) AND f.group_id = h.group_id AND f.id > h.id AND f.id < h.stop
			AND f.enqueued_at > (SELECT cutoff FROM q)
		ORDER BY f.id LIMIT $3) f
),
c AS (
	SELECT m.ctid, m.id, m.receive_count FROM messages m
	WHERE m.queue_id = (SELECT id FROM q) AND m.id = ANY (ARRAY(
			SELECT id FROM (SELECT id, ord FROM heads UNION ALL SELECT id, ord FROM followers) hf ORDER BY ord, id LIMIT $3))
		AND m.visible_at <= $2 AND m.enqueued_at > (SELECT cutoff FROM q)
	FOR UPDATE OF m
)`
	// fifoGroupWrites keep fifo_groups current after a FIFO claim: see above. Groups
	// whose messages went to the dead-letter queue stay ready (the receive claims
	// again), and the dead-letter queue's groups become ready at once.
	fifoGroupWrites = `
gd AS (
	INSERT INTO fifo_groups (queue_id, group_id, ready_at)
	SELECT DISTINCT (SELECT dlq_id FROM q), mv.group_id COLLATE "C", $2::timestamptz FROM mv
	WHERE (SELECT dlq_fifo FROM q) AND mv.group_id IS NOT NULL ORDER BY 2
	ON CONFLICT (queue_id, group_id) DO UPDATE SET ready_at = least(fifo_groups.ready_at, excluded.ready_at)
	RETURNING 1
),
gq AS (
	UPDATE fifo_groups g SET ready_at = CASE
		WHEN EXISTS (SELECT 1 FROM cl WHERE cl.group_id = g.group_id) THEN $4::timestamptz
		WHEN EXISTS (SELECT 1 FROM mv WHERE mv.group_id = g.group_id) THEN $2::timestamptz
		ELSE coalesce((
			SELECT least(h.visible_at, h.enqueued_at + ($2::timestamptz - (SELECT cutoff FROM q)))
			FROM messages h WHERE h.queue_id = g.queue_id AND h.group_id = g.group_id
				AND h.enqueued_at > (SELECT cutoff FROM q)
			ORDER BY h.id LIMIT 1), 'infinity') END
	WHERE g.queue_id = (SELECT id FROM q) AND g.group_id IN (SELECT group_id FROM grp)
		AND EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = g.queue_id AND m.group_id = g.group_id)
	RETURNING 1
),
gx AS (
	DELETE FROM fifo_groups g
	WHERE g.queue_id = (SELECT id FROM q) AND g.group_id IN (SELECT group_id FROM grp)
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = g.queue_id AND m.group_id = g.group_id)
	RETURNING 1
),`
)

// lockGroupsSQL is a FIFO claim's first statement: it locks the rows of up to $3 groups
// that may be claimable, skipping those other transactions hold, and names them for the
// claim statement in a setting that ends with the transaction.
const lockGroupsSQL = `SELECT set_config('anysqs.claim_groups', coalesce(array_agg(s.group_id ORDER BY s.ready_at, s.group_id)::text, '{}'), true) FROM (
	SELECT g.group_id, g.ready_at FROM fifo_groups g
	WHERE g.queue_id = (SELECT id FROM queues WHERE name = $1) AND g.ready_at <= $2
	ORDER BY g.ready_at LIMIT $3 FOR UPDATE SKIP LOCKED) s`

// claimSQL claims candidates in one statement: messages already received
// maxReceiveCount times move to the dead-letter queue the queue's columns name
// (sqsrule.RedriveDue and sqsrule.DLQEnqueueTime, written in SQL; FIFO ones with a new
// sequence number there), the others get a new receipt token, deadline and receive count. With
// an attempt id ($6) the claimed set is recorded for replay. The updates address the
// rows c locked by ctid: a TID scan is every planner's cheapest choice, whereas an
// index condition on queue_id alone could tempt a plan made while the table was small
// into scanning the queue's whole backlog. c holds the row locks, so the ctids stay
// current until the statement ends.
func claimSQL(candidates string, fifo bool, grouped string) string {
	rec, groups, stale, order := "", "", "0::bigint", "cl.id"
	if fifo {
		order = "(SELECT ord FROM grp WHERE grp.group_id = cl.group_id), cl.id"
		groups = fifoGroupWrites
		stale = "(SELECT count(*) FROM grp WHERE group_id NOT IN (SELECT group_id FROM cl WHERE group_id IS NOT NULL))"
		rec = `
rec AS (
	INSERT INTO receive_attempts (queue_id, attempt_id, ids, receipts, expires_at)
	SELECT (SELECT id FROM q), $6, array_agg(id ORDER BY id), array_agg(receipt ORDER BY id), $7 FROM cl
	WHERE $6 <> '' HAVING count(*) > 0
	ON CONFLICT (queue_id, attempt_id) DO UPDATE
		SET ids = excluded.ids, receipts = excluded.receipts, expires_at = excluded.expires_at
	RETURNING 1
),`
	}
	return `WITH q AS (
	SELECT q.id, q.fifo, d.name AS dlq_name, d.id AS dlq_id, d.fifo AS dlq_fifo,
		CASE WHEN d.id IS NOT NULL THEN q.max_receive ELSE 2147483647 END AS redrive_at,
		$2::timestamptz - make_interval(secs => q.retention) AS cutoff
	FROM queues q LEFT JOIN queues d ON d.name = q.dlq_name
	WHERE q.name = $1
),
` + candidates + `,
mv AS (
	UPDATE messages m SET queue_id = q.dlq_id, visible_at = $2, receipt = NULL, dlq_source = $1,
		id = CASE WHEN q.dlq_fifo THEN nextval('message_seq') ELSE m.id END,
		enqueued_at = CASE WHEN q.dlq_fifo THEN $2 ELSE m.enqueued_at END,
		dedup_id = CASE WHEN q.dlq_fifo THEN m.message_id ELSE m.dedup_id END
	FROM q WHERE m.ctid = ANY (ARRAY(SELECT c.ctid FROM c WHERE c.receive_count >= (SELECT redrive_at FROM q)))
	RETURNING m.id, m.group_id
),
cl AS (
	UPDATE messages m SET receipt = gen_random_uuid(), visible_at = $4, receive_count = m.receive_count + 1,
		first_received_at = coalesce(m.first_received_at, $2), received_at = $2
	WHERE m.ctid = ANY (ARRAY(SELECT c.ctid FROM c WHERE c.receive_count < (SELECT redrive_at FROM q)))
	RETURNING m.id, m.message_id, m.receipt, m.body, m.attrs, m.sys_attrs, m.sender_id, m.sent_at,
		m.first_received_at, m.receive_count, m.group_id, m.dedup_id, m.dlq_source
),` + rec + groups + `
nt AS (SELECT pg_notify($5, q.dlq_name) FROM q WHERE EXISTS (SELECT 1 FROM mv)),
nv AS (
	SELECT CASE WHEN (SELECT count(*) FROM cl) < $3 THEN least(
		(SELECT min(m.visible_at) FROM messages m, q WHERE m.queue_id = q.id AND m.visible_at > $2 AND m.receipt IS NULL),
		(SELECT min(m.visible_at) FROM messages m, q WHERE m.queue_id = q.id AND m.visible_at > $2 AND m.receipt IS NOT NULL),
		CASE WHEN EXISTS (SELECT 1 FROM cl) THEN $4::timestamptz END) END AS next
)
SELECT q.id, q.fifo, (SELECT count(*) FROM mv) * (SELECT count(*) FROM nt), ` + stale + `, (SELECT next FROM nv), ` + grouped + `, cl.*
FROM q LEFT JOIN cl ON true ORDER BY ` + order
}

// standardCandidatesSQL are a standard claim's candidates, as CTE name, when guard
// (pseudo-constant SQL ending in AND, or "") holds: the messages never received that
// have been visible longest (messages_visible) and the returned ones, received before
// and visible again, visible longest (messages_returned). The two sets are disjoint
// (receipt IS NULL or not), so they are appended without de-duplication.
func standardCandidatesSQL(guard, name string) string {
	return `c1 AS (
	SELECT m.ctid, m.id, m.receive_count FROM messages m
	WHERE ` + guard + ` m.queue_id = (SELECT id FROM q) AND m.visible_at <= $2 AND m.receipt IS NULL
		AND m.enqueued_at > (SELECT cutoff FROM q)
	ORDER BY m.visible_at LIMIT $3 FOR UPDATE OF m SKIP LOCKED
),
c2 AS (
	SELECT m.ctid, m.id, m.receive_count FROM messages m
	WHERE ` + guard + ` m.queue_id = (SELECT id FROM q) AND m.visible_at <= $2 AND m.receipt IS NOT NULL
		AND m.enqueued_at > (SELECT cutoff FROM q)
	ORDER BY m.visible_at LIMIT $3 FOR UPDATE OF m SKIP LOCKED
),
` + name + ` AS (SELECT * FROM (SELECT * FROM c1 UNION ALL SELECT * FROM c2) u ORDER BY u.id LIMIT $3)`
}

// groupedProbe tells whether a standard queue holds a message with a group: one probe of
// a partial index, which reads nothing on a queue without groups.
const groupedProbe = `EXISTS (SELECT 1 FROM messages g WHERE g.queue_id = q.id AND g.group_id IS NOT NULL)`

var (
	standardClaimSQL = claimSQL(standardCandidatesSQL("", "c"), false, groupedProbe)
	fairClaimSQL     = claimSQL(fairCandidates, false, "(SELECT grouped FROM fg)")
	fifoClaimSQL     = claimSQL(fifoCandidates, true, "false")
)

// claimedRow is one row of claimSQL's result; the message columns are NULL when nothing
// was claimed.
type claimedRow struct {
	queueID         int32
	fifo            bool
	moved           int64      // messages moved to the dead-letter queue (and notified)
	stale           int64      // FIFO: groups locked that yielded no message
	next            *time.Time // earliest future deadline, only when the batch is not full
	grouped         bool       // standard: the queue holds a message with a group
	id              *int64
	messageID       *string
	receipt         pgtype.UUID
	body            *string
	attrs, sys      []byte
	senderID        *string
	sentAt          *time.Time
	firstReceivedAt *time.Time
	receiveCount    *int32
	groupID         *string
	dedupID         *string
	dlqSource       *string
}

func (r *claimedRow) scan(row pgx.Row) error {
	return row.Scan(&r.queueID, &r.fifo, &r.moved, &r.stale, &r.next, &r.grouped, &r.id, &r.messageID, &r.receipt, &r.body, &r.attrs, &r.sys,
		&r.senderID, &r.sentAt, &r.firstReceivedAt, &r.receiveCount, &r.groupID, &r.dedupID, &r.dlqSource)
}

func (r *claimedRow) message(key []byte) (drivers.Message, error) {
	m := drivers.Message{
		MessageID:        deref(r.messageID),
		ReceiptHandle:    handle{queueID: r.queueID, id: *r.id, token: r.receipt.Bytes}.seal(key),
		Body:             deref(r.body),
		SenderID:         deref(r.senderID),
		ReceiveCount:     *r.receiveCount,
		MessageGroupID:   deref(r.groupID),
		DeadLetterSource: deref(r.dlqSource),
	}
	if r.fifo {
		m.MessageDeduplicationID = deref(r.dedupID)
		m.SequenceNumber = seqString(*r.id)
	}
	if r.sentAt != nil {
		m.SentAt = *r.sentAt
	}
	if r.firstReceivedAt != nil {
		m.FirstReceivedAt = *r.firstReceivedAt
	}
	var err error
	if m.Attributes, err = decodeAttrs(r.attrs); err != nil {
		return m, err
	}
	m.SystemAttributes, err = decodeAttrs(r.sys)
	return m, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ReceiveMessages claims up to MaxMessages messages, normally in one round trip.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	max := req.MaxMessages
	if max < 1 {
		max = 1
	}
	if max > sqsrule.MaxReceiveMessages {
		max = sqsrule.MaxReceiveMessages
	}
	fifo := isFIFO(req.Name)
	if fifo && req.ReceiveRequestAttemptID != "" {
		res, ok, err := d.replay(ctx, req)
		if err != nil || ok {
			return res, err
		}
	}
	attempt := ""
	if fifo {
		attempt = req.ReceiveRequestAttemptID
	}
	var res drivers.ReceiveMessagesResult
	// A claim that moved messages to the dead-letter queue instead of returning them
	// claims again for the rest, so a poisoned head does not make the receive look empty.
	// So does a FIFO claim that locked groups with nothing to claim: it corrected their
	// ready_at, so the next round looks at other groups.
	for round := 0; round < 4; round++ {
		var c claimResult
		var err error
		if fifo {
			c, err = d.claim(ctx, req, true, max-len(res.Messages), attempt)
		} else {
			c, err = d.claimMerged(ctx, req, max-len(res.Messages))
		}
		if err != nil {
			return drivers.ReceiveMessagesResult{}, err
		}
		res.Messages = append(res.Messages, c.Messages...)
		res.NextVisibleAt = c.NextVisibleAt
		res.DeadLettered += c.DeadLettered
		if !(c.moved || c.stale) || len(res.Messages) >= max {
			break
		}
		if len(res.Messages) > 0 {
			attempt = "" // the attempt record covers the first round with messages only
		}
	}
	return res, nil
}

// recvCall is one standard receive waiting to be merged with concurrent ones on the
// same queue and visibility timeout (see batcher): one claim statement takes the sum of
// their messages and hands them out in the order the calls arrived.
type recvCall struct {
	name string
	now  time.Time
	vt   int32
	max  int
}

// maxMergedReceives bounds the messages one merged claim takes.
const maxMergedReceives = 100

func (d *Driver) claimMerged(ctx context.Context, req drivers.ReceiveMessagesRequest, max int) (claimResult, error) {
	key := req.Name + "\x00" + strconv.Itoa(int(req.VisibilityTimeout))
	res, err := d.receives.do(ctx, key, []recvCall{{name: req.Name, now: req.Now, vt: req.VisibilityTimeout, max: max}})
	if err != nil {
		return claimResult{}, err
	}
	return res[0], nil
}

// claimCalls runs one claim for merged receives, at the latest of their times.
func (d *Driver) claimCalls(ctx context.Context, _ string, calls []recvCall) ([]claimResult, error) {
	total := 0
	req := drivers.ReceiveMessagesRequest{Name: calls[0].name, VisibilityTimeout: calls[0].vt}
	for _, c := range calls {
		total += c.max
		if c.now.After(req.Now) {
			req.Now = c.now
		}
	}
	all, err := d.claim(ctx, req, false, total, "")
	if err != nil {
		return nil, err
	}
	out := make([]claimResult, len(calls))
	msgs := all.Messages
	for i, c := range calls {
		n := min(c.max, len(msgs))
		out[i] = all
		out[i].Messages = msgs[:n:n]
		if i > 0 {
			out[i].DeadLettered = 0 // the statement's moves are counted once, by the first call
		}
		msgs = msgs[n:]
	}
	return out, nil
}

type claimResult struct {
	drivers.ReceiveMessagesResult
	moved bool
	stale bool // FIFO: some locked group had nothing to claim
}

// fifoExtraGroups is how many groups beyond the messages wanted a FIFO claim locks, so
// that groups whose ready_at came early do not leave the receive short.
const fifoExtraGroups = 4

// claim runs one claim statement. NextVisibleAt is computed only when fewer than max messages were
// claimed: a full batch never makes the gateway wait, and the contract lets it be zero.
func (d *Driver) claim(ctx context.Context, req drivers.ReceiveMessagesRequest, fifo bool, max int, attempt string) (claimResult, error) {
	b := &pgx.Batch{}
	claim := standardClaimSQL
	switch {
	case fifo:
		claim = fifoClaimSQL
	case d.fair.grouped(req.Name):
		claim = fairClaimSQL
	}
	grouped := false
	deadline := req.Now.Add(time.Duration(req.VisibilityTimeout) * time.Second)
	var res claimResult
	found := false
	var decodeErr error
	args := []any{req.Name, req.Now, max, deadline, d.channel}
	if fifo {
		args = append(args, attempt, sqsrule.AttemptExpiry(req.Now))
		// Statements of one batch share one transaction; each takes a new snapshot.
		b.Queue(lockGroupsSQL, req.Name, req.Now, max+fifoExtraGroups)
	}
	b.Queue(claim, args...).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var r claimedRow
				if err := r.scan(rows); err != nil {
					return err
				}
				found = true
				grouped = r.grouped
				res.moved = r.moved > 0
				res.DeadLettered = int32(r.moved)
				res.stale = r.stale > 0
				if r.next != nil {
					res.NextVisibleAt = *r.next
				}
				if r.id == nil {
					continue
				}
				m, err := r.message(d.receiptKey)
				if err != nil {
					decodeErr = err
					continue
				}
				res.Messages = append(res.Messages, m)
			}
			return rows.Err()
		})
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return claimResult{}, mapErr(ctx, err, "receive from "+req.Name)
	}
	if !found {
		return claimResult{}, notFound(req.Name)
	}
	if !fifo {
		d.fair.set(req.Name, grouped)
	}
	if decodeErr != nil {
		// The claim committed; the messages reappear after their visibility timeout.
		return claimResult{}, decodeErr
	}
	return res, nil
}

// replaySQL returns the messages a recorded attempt claimed that are still in flight
// under the recorded receipt tokens: sqsrule.AttemptLive and sqsrule.AttemptHeld, in SQL.
const replaySQL = `WITH a AS (
	SELECT ra.queue_id, ra.ids, ra.receipts, q.fifo FROM receive_attempts ra JOIN queues q ON q.id = ra.queue_id
	WHERE q.name = $1 AND ra.attempt_id = $2 AND ra.expires_at > $3
)
SELECT a.queue_id, a.fifo, cardinality(a.ids)::bigint, m.id, m.message_id, m.receipt, m.body, m.attrs, m.sys_attrs,
	m.sender_id, m.sent_at, m.first_received_at, m.receive_count, m.group_id, m.dedup_id, m.dlq_source
FROM a LEFT JOIN LATERAL (
	SELECT m.* FROM messages m JOIN unnest(a.ids, a.receipts) AS u(id, receipt)
		ON m.id = u.id AND m.receipt = u.receipt
	WHERE m.queue_id = a.queue_id AND m.visible_at > $3
) m ON true ORDER BY m.id`

// replay answers a repeated ReceiveRequestAttemptId with the first call's messages and
// receipt handles when all of them are still in flight under those handles.
func (d *Driver) replay(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, bool, error) {
	rows, err := d.pool.Query(ctx, replaySQL, req.Name, req.ReceiveRequestAttemptID, req.Now)
	if err != nil {
		return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
	}
	defer rows.Close()
	var res drivers.ReceiveMessagesResult
	want := int64(-1)
	for rows.Next() {
		var r claimedRow
		if err := rows.Scan(&r.queueID, &r.fifo, &want, &r.id, &r.messageID, &r.receipt, &r.body, &r.attrs, &r.sys,
			&r.senderID, &r.sentAt, &r.firstReceivedAt, &r.receiveCount, &r.groupID, &r.dedupID, &r.dlqSource); err != nil {
			return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
		}
		if r.id == nil {
			continue
		}
		m, err := r.message(d.receiptKey)
		if err != nil {
			return drivers.ReceiveMessagesResult{}, false, err
		}
		res.Messages = append(res.Messages, m)
	}
	if err := rows.Err(); err != nil {
		return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
	}
	if want <= 0 || int64(len(res.Messages)) != want {
		return drivers.ReceiveMessagesResult{}, false, nil
	}
	return res, true, nil
}
