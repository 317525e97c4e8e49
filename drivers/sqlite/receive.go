package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// maxRedriveRounds bounds how many candidate rounds one receive makes when redrive
// keeps moving the candidates away, so a receive cannot turn into an unbounded drain.
const maxRedriveRounds = 10

// msgRow is one stored message.
type msgRow struct {
	id              int64
	messageID       string
	body            string
	attrs, sysAttrs string
	senderID        string
	sentAt          int64
	enqueuedAt      int64
	visibleAt       int64
	receiveCount    int32
	firstReceivedAt int64
	token           sql.NullString
	groupID         string
	dedupID         string
	seq             int64
	dlqSource       string
}

const msgCols = `id, message_id, body, attrs, sys_attrs, sender_id, sent_at, enqueued_at, visible_at,
	receive_count, first_received_at, token, group_id, dedup_id, seq, dlq_source`

func scanMsg(sc interface{ Scan(...any) error }) (msgRow, error) {
	var m msgRow
	err := sc.Scan(&m.id, &m.messageID, &m.body, &m.attrs, &m.sysAttrs, &m.senderID, &m.sentAt, &m.enqueuedAt,
		&m.visibleAt, &m.receiveCount, &m.firstReceivedAt, &m.token, &m.groupID, &m.dedupID, &m.seq, &m.dlqSource)
	return m, err
}

// readMsgs runs query and scans every row it returns as a message.
func readMsgs(ctx context.Context, tx conn, query string, args ...any) ([]msgRow, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
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

// prefixCols qualifies each column of a column list with a table alias.
func prefixCols(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

func (d *Driver) toMessage(q queueRow, m msgRow) (drivers.Message, error) {
	out := drivers.Message{
		MessageID:              m.messageID,
		Body:                   m.body,
		SenderID:               m.senderID,
		SentAt:                 fromNanos(m.sentAt),
		FirstReceivedAt:        fromNanos(m.firstReceivedAt),
		ReceiveCount:           m.receiveCount,
		MessageGroupID:         m.groupID,
		MessageDeduplicationID: m.dedupID,
		SequenceNumber:         sqsrule.SequenceNumber(m.seq),
		DeadLetterSource:       m.dlqSource,
	}
	if m.token.Valid {
		out.ReceiptHandle = d.encodeHandle(receipt{queueID: q.id, rowID: m.id, token: m.token.String})
	}
	var err error
	if out.Attributes, err = decodeAttrs(m.attrs); err != nil {
		return out, drivers.Wrap(drivers.KindInternal, err, "sqlite: message "+m.messageID+": attributes")
	}
	if out.SystemAttributes, err = decodeAttrs(m.sysAttrs); err != nil {
		return out, drivers.Wrap(drivers.KindInternal, err, "sqlite: message "+m.messageID+": system attributes")
	}
	return out, nil
}

// claim is one message row and the token of the receive that claimed it, kept for
// ReceiveRequestAttemptId replay.
type claim struct {
	Row   int64  `json:"r"`
	Token string `json:"t"`
}

// ReceiveMessages claims up to MaxMessages visible messages in one transaction.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	var res drivers.ReceiveMessagesResult
	err := d.write(ctx, func(tx conn) error {
		res = drivers.ReceiveMessagesResult{}
		q, err := tx.queueRow(req.Name)
		if err != nil {
			return err
		}
		now := toNanos(req.Now)
		if q.fifo && req.ReceiveRequestAttemptID != "" {
			msgs, ok, err := d.replayAttempt(ctx, tx, q, req.ReceiveRequestAttemptID, now)
			if err != nil {
				return err
			}
			if ok {
				res.Messages = msgs
				return nil
			}
		}
		if res.Messages, res.DeadLettered, err = d.claimMessages(ctx, tx, q, req, now); err != nil {
			return err
		}
		if len(res.Messages) > 0 {
			return nil // NextVisibleAt matters only to a receive that found nothing
		}
		var next sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(visible_at) FROM messages WHERE queue_id = ? AND visible_at > ?`,
			q.id, now).Scan(&next); err != nil {
			return err
		}
		if next.Valid {
			res.NextVisibleAt = fromNanos(next.Int64)
		}
		return nil
	})
	if err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	return res, nil
}

// claimMessages claims up to req.MaxMessages messages and returns them, with how many
// it moved to the dead-letter queue instead.
func (d *Driver) claimMessages(ctx context.Context, tx conn, q queueRow, req drivers.ReceiveMessagesRequest, now int64) (
	[]drivers.Message, int32, error) {
	max := req.MaxMessages
	if max <= 0 {
		max = 1
	}
	dlq, maxCount, err := redriveTarget(tx, q)
	if err != nil {
		return nil, 0, err
	}
	var deadLettered int32
	deadline := now + int64(req.VisibilityTimeout)*int64(time.Second)
	var (
		out    []drivers.Message
		claims []claim
	)
	for round := 0; len(out) < max && round < maxRedriveRounds; round++ {
		rows, err := candidates(ctx, tx, q, now, max-len(out))
		if err != nil {
			return nil, 0, err
		}
		redriven := 0
		var claimed []msgRow
		for _, m := range rows {
			if dlq != nil && sqsrule.RedriveDue(int64(m.receiveCount), maxCount) {
				if err := moveMessage(ctx, tx, q, *dlq, m, now, true); err != nil {
					return nil, 0, err
				}
				redriven++
				deadLettered++
				continue
			}
			tok, err := newToken()
			if err != nil {
				return nil, 0, err
			}
			m.receiveCount++
			if m.firstReceivedAt == 0 {
				m.firstReceivedAt = now
			}
			m.visibleAt, m.token = deadline, sql.NullString{String: tok, Valid: true}
			claimed = append(claimed, m)
		}
		if err := claimRows(ctx, tx, claimed, deadline, now); err != nil {
			return nil, 0, err
		}
		for _, m := range claimed {
			msg, err := d.toMessage(q, m)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, msg)
			claims = append(claims, claim{Row: m.id, Token: m.token.String})
		}
		if redriven == 0 {
			break
		}
	}
	// An empty receive is not recorded: a retry with the same attempt id should look again.
	if q.fifo && req.ReceiveRequestAttemptID != "" && len(claims) > 0 {
		b, err := json.Marshal(claims)
		if err != nil {
			return nil, 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO receive_attempts(queue_id, attempt_id, claims, expires_at)
			VALUES (?, ?, ?, ?)`, q.id, req.ReceiveRequestAttemptID, string(b), toNanos(sqsrule.AttemptExpiry(req.Now))); err != nil {
			return nil, 0, err
		}
	}
	return out, deadLettered, nil
}

// redriveTarget returns the queue's dead-letter queue (sqsrule.RedriveTarget), or nil
// when it has none or the named queue no longer exists.
func redriveTarget(tx conn, q queueRow) (*queueRow, int32, error) {
	name, maxCount, ok := sqsrule.RedriveTarget(q.name, q.attrs.RedrivePolicy)
	if !ok {
		return nil, 0, nil
	}
	dlq, err := tx.queueRow(name)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return &dlq, maxCount, nil
}

// fifoCandidates selects receivable FIFO messages (?1 queue, ?2 now, ?3 retention
// cutoff, ?4 limit) in the contract's order: the runs of sqsrule.FIFORuns, in SQL. The
// walk goes through the groups whose
// head is visible, in order of the moment it became visible (fifo_groups_ready), and
// through each group's messages in sequence order, up to the group's first invisible
// message, in flight or delayed (looked up per group in messages_group_hidden, which
// reads only the group's invisible messages), stopping at the limit. Groups whose head
// is in flight and messages queued behind an invisible one are never read. INDEXED BY
// because the planner, unguided, may filter on another index and then sort the whole
// backlog.
var fifoCandidates = `SELECT ` + prefixCols("m.", msgCols) + `
		FROM fifo_groups g INDEXED BY fifo_groups_ready
		JOIN messages m INDEXED BY messages_group_seq ON m.queue_id = g.queue_id AND m.group_id = g.group_id
			AND m.group_id <> ''
			AND m.seq < COALESCE((SELECT MIN(e.seq) FROM messages e INDEXED BY messages_group_hidden
				WHERE e.queue_id = ?1 AND e.group_id = g.group_id AND e.visible_at > ?2 AND e.seq > 0),
				9223372036854775807)
		WHERE g.queue_id = ?1 AND g.head_visible_at <= ?2
		AND m.visible_at <= ?2 AND m.enqueued_at > ?3
		ORDER BY g.head_visible_at, g.head_seq, m.seq LIMIT ?4`

// standardCandidates selects receivable standard messages (same parameters). Order is
// best effort, as in SQS: it reads the ?4 messages visible longest and the ?4 returned
// messages (received before, visible again) visible longest, each from its own index,
// and hands out the older sends first, so that a message whose visibility ended comes
// before messages sent after it without a scan of the backlog.
var standardCandidates = `SELECT ` + msgCols + ` FROM (
		SELECT * FROM (SELECT ` + msgCols + ` FROM messages INDEXED BY messages_visible
			WHERE queue_id = ?1 AND visible_at <= ?2 AND enqueued_at > ?3
			ORDER BY visible_at, enqueued_at, id LIMIT ?4)
		UNION
		SELECT * FROM (SELECT ` + msgCols + ` FROM messages INDEXED BY messages_claimed
			WHERE queue_id = ?1 AND visible_at <= ?2 AND token IS NOT NULL AND enqueued_at > ?3
			ORDER BY visible_at LIMIT ?4))
		ORDER BY enqueued_at, id LIMIT ?4`

// candidates returns up to n messages receivable at now, in delivery order (see the
// Driver contract: FIFO groups by availability, standard messages best effort, quiet
// groups before noisy ones: fair.go).
func candidates(ctx context.Context, tx conn, q queueRow, now int64, n int) ([]msgRow, error) {
	cutoff := now - retentionNanos(q.attrs) // expired messages wait for Sweep but are never delivered
	query := standardCandidates
	var out []msgRow
	if q.fifo {
		query = fifoCandidates
	} else {
		noisy, err := tx.d.noisyGroups(ctx, tx, q, now)
		if err != nil {
			return nil, err
		}
		if len(noisy) > 0 {
			if out, err = quietCandidates(ctx, tx, q, now, cutoff, n, noisy); err != nil || len(out) == n {
				return out, err
			}
			more, err := noisyCandidates(ctx, tx, q, now, cutoff, n-len(out), noisy)
			return append(out, more...), err
		}
	}
	rows, err := tx.QueryContext(ctx, query, q.id, now, cutoff, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() && len(out) < n {
		m, err := scanMsg(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// replayAttempt returns the messages of an earlier receive with the same attempt id if
// that receive is recent and all its messages are still in flight under its handles:
// sqsrule.AttemptLive and sqsrule.AttemptHeld, in SQL.
func (d *Driver) replayAttempt(ctx context.Context, tx conn, q queueRow, attempt string, now int64) ([]drivers.Message, bool, error) {
	var raw string
	err := tx.QueryRowContext(ctx, `SELECT claims FROM receive_attempts WHERE queue_id = ? AND attempt_id = ? AND expires_at > ?`,
		q.id, attempt, now).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var claims []claim
	if err := json.Unmarshal([]byte(raw), &claims); err != nil {
		return nil, false, err
	}
	out := make([]drivers.Message, 0, len(claims))
	for _, c := range claims {
		m, err := scanMsg(tx.QueryRowContext(ctx, `SELECT `+msgCols+` FROM messages
			WHERE id = ? AND queue_id = ? AND token = ? AND visible_at > ?`, c.Row, q.id, c.Token, now))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		msg, err := d.toMessage(q, m)
		if err != nil {
			return nil, false, err
		}
		out = append(out, msg)
	}
	return out, true, nil
}

// claimRows stores the claims of ms (their new tokens, receive counts and first receive
// times, visible again at deadline) in one statement.
func claimRows(ctx context.Context, tx conn, ms []msgRow, deadline, now int64) error {
	if len(ms) == 0 {
		return nil
	}
	n := len(ms)
	if n == 1 { // the CASE form costs more than it saves for one row
		m := ms[0]
		_, err := tx.ExecContext(ctx, `UPDATE messages SET token = ?, visible_at = ?, receive_count = ?,
			first_received_at = ?, received_at = ? WHERE id = ?`, m.token.String, deadline, m.receiveCount, m.firstReceivedAt, now, m.id)
		return err
	}
	args := make([]any, 0, 3+6*n)
	args = append(args, deadline, now)
	for _, m := range ms {
		args = append(args, m.id, m.token.String)
	}
	for _, m := range ms {
		args = append(args, m.id, m.receiveCount)
	}
	for _, m := range ms {
		args = append(args, m.id, m.firstReceivedAt)
	}
	for _, m := range ms {
		args = append(args, m.id)
	}
	res, err := tx.ExecContext(ctx, claimSQL.text(n), args...)
	if err != nil {
		return err
	}
	got, err := res.RowsAffected()
	if err != nil {
		return classify(err, "sqlite: claim")
	}
	if got != int64(n) {
		return drivers.Errorf(drivers.KindInternal, "sqlite: claimed %d of %d messages", got, n)
	}
	return nil
}

var claimSQL = newByArity(claimQuery)

// claimQuery updates n messages by id. Arguments: the visibility deadline, now, then n
// (id, token), n (id, receive count) and n (id, first receive) pairs, then the n ids.
func claimQuery(n int) string {
	pairs := strings.Repeat(" WHEN ? THEN ?", n)
	return `UPDATE messages SET visible_at = ?, received_at = ?, token = CASE id` + pairs +
		` END, receive_count = CASE id` + pairs + ` END, first_received_at = CASE id` + pairs +
		` END WHERE id IN (?` + strings.Repeat(", ?", n-1) + `)`
}
