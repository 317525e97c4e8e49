package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// browseSQL reads one page of a queue's messages in id (send) order, leaving out those
// past retention; a queue with none answers one row of NULL message columns, a missing
// queue none.
const browseSQL = `SELECT q.id, q.fifo, m.id, m.message_id, m.receipt, m.body, m.attrs, m.sys_attrs,
	m.sender_id, m.sent_at, m.first_received_at, m.receive_count, m.group_id, m.dedup_id, m.dlq_source, m.visible_at
FROM queues q LEFT JOIN LATERAL (
	SELECT * FROM messages m WHERE m.queue_id = q.id AND m.id > $2
		AND m.enqueued_at > $3::timestamptz - make_interval(secs => q.retention)
	ORDER BY m.id LIMIT $4
) m ON true WHERE q.name = $1 ORDER BY m.id`

// BrowseMessages lists a queue's messages in send order without changing them; the
// cursor is the last message row id returned.
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	var after int64
	if req.After != "" {
		var err error
		if after, err = strconv.ParseInt(req.After, 10, 64); err != nil || after < 0 {
			return drivers.BrowseMessagesResult{}, drivers.Errorf(drivers.KindInvalidArgument,
				"postgres: browse cursor %q is not one this driver returned", req.After)
		}
	}
	limit := max(req.Limit, 1)
	rows, err := d.pool.Query(ctx, browseSQL, req.Name, after, req.Now, limit+1)
	if err != nil {
		return drivers.BrowseMessagesResult{}, mapErr(ctx, err, "browse "+req.Name)
	}
	defer rows.Close()
	var res drivers.BrowseMessagesResult
	found, last := false, int64(0)
	for rows.Next() {
		found = true
		var r claimedRow
		var visibleAt *time.Time
		if err := rows.Scan(&r.queueID, &r.fifo, &r.id, &r.messageID, &r.receipt, &r.body, &r.attrs, &r.sys,
			&r.senderID, &r.sentAt, &r.firstReceivedAt, &r.receiveCount, &r.groupID, &r.dedupID, &r.dlqSource, &visibleAt); err != nil {
			return drivers.BrowseMessagesResult{}, mapErr(ctx, err, "browse "+req.Name)
		}
		if r.id == nil {
			continue // the queue exists and holds no message after the cursor
		}
		if len(res.Messages) == limit {
			res.NextAfter = strconv.FormatInt(last, 10)
			break
		}
		b := drivers.BrowsedMessage{State: drivers.StateVisible}
		if visibleAt != nil && visibleAt.After(req.Now) {
			b.State, b.VisibleAt = drivers.StateDelayed, *visibleAt
			if r.receipt.Valid {
				b.State = drivers.StateInFlight
			}
		}
		if b.Message, err = r.message(d.receiptKey); err != nil {
			return drivers.BrowseMessagesResult{}, err
		}
		b.ReceiptHandle, last = "", *r.id
		res.Messages = append(res.Messages, b)
	}
	if err := rows.Err(); err != nil {
		return drivers.BrowseMessagesResult{}, mapErr(ctx, err, "browse "+req.Name)
	}
	if !found {
		return drivers.BrowseMessagesResult{}, notFound(req.Name)
	}
	return res, nil
}
