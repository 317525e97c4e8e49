package sqlite

import (
	"context"
	"strconv"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseMessages lists a queue's messages in send order (row id), reading only: the
// cursor is the last row id returned.
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	var after int64
	if req.After != "" {
		var err error
		if after, err = strconv.ParseInt(req.After, 10, 64); err != nil || after < 0 {
			return drivers.BrowseMessagesResult{}, drivers.Errorf(drivers.KindInvalidArgument, "sqlite: browse cursor %q is not one this driver returned", req.After)
		}
	}
	limit := max(req.Limit, 1)
	var res drivers.BrowseMessagesResult
	err := d.read(ctx, func(db queryer) error {
		q, _, err := loadQueue(ctx, db, req.Name)
		if err != nil {
			return err
		}
		now := toNanos(req.Now)
		rows, err := db.QueryContext(ctx, `SELECT `+msgCols+` FROM messages
			WHERE queue_id = ? AND id > ? AND enqueued_at > ? ORDER BY id LIMIT ?`,
			q.id, after, now-retentionNanos(q.attrs), limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last int64
		for rows.Next() {
			m, err := scanMsg(rows)
			if err != nil {
				return err
			}
			if len(res.Messages) == limit {
				res.NextAfter = strconv.FormatInt(last, 10)
				break
			}
			last = m.id
			b := drivers.BrowsedMessage{State: drivers.StateVisible}
			switch {
			case m.visibleAt > now && m.token.Valid:
				b.State, b.VisibleAt = drivers.StateInFlight, fromNanos(m.visibleAt)
			case m.visibleAt > now:
				b.State, b.VisibleAt = drivers.StateDelayed, fromNanos(m.visibleAt)
			}
			m.token.Valid = false // no receipt handle
			if b.Message, err = d.toMessage(q, m); err != nil {
				return err
			}
			res.Messages = append(res.Messages, b)
		}
		return rows.Err()
	})
	if err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	return res, nil
}
