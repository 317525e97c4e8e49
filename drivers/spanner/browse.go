package spanner

import (
	"context"
	"strconv"
	"strings"

	"cloud.google.com/go/spanner"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseMessages lists a queue's messages in primary-key order (partition, then sequence
// number) from a read-only snapshot. The cursor is the last key returned, "<seq>/<part>".
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	part, seq := "", int64(-1)
	if req.After != "" {
		s, p, ok := strings.Cut(req.After, "/")
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return drivers.BrowseMessagesResult{}, drivers.Errorf(drivers.KindInvalidArgument,
				"spanner: browse cursor %q is not one this driver returned", req.After)
		}
		part, seq = p, n
	}
	limit := max(req.Limit, 1)
	tx, done := d.snapshot(ctx)
	defer done()
	qr, err := readQueue(ctx, tx, req.Name)
	if err != nil {
		return drivers.BrowseMessagesResult{}, mapErr(ctx, err, "browse "+req.Name)
	}
	var res drivers.BrowseMessagesResult
	var last msgRow
	err = tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(messageCols) + ` FROM Messages
		WHERE QueueName = @q AND (Part > @part OR (Part = @part AND Seq > @seq))
			AND EnqueuedAt > @cutoff AND Committed > @purged
		ORDER BY Part, Seq LIMIT @limit`,
		Params: map[string]any{"q": req.Name, "part": part, "seq": seq, "limit": int64(limit + 1),
			"cutoff": req.Now.Add(-retention(qr.q.Attributes)), "purged": qr.purged}}).Do(func(r *spanner.Row) error {
		m, err := scanMsg(r)
		if err != nil {
			return err
		}
		if len(res.Messages) == limit {
			res.NextAfter = strconv.FormatInt(last.Seq, 10) + "/" + last.Part
			return nil
		}
		last = m
		b := drivers.BrowsedMessage{State: drivers.StateVisible}
		if m.VisibleAt.After(req.Now) {
			b.State, b.VisibleAt = drivers.StateDelayed, m.VisibleAt
			if m.Token.Valid {
				b.State = drivers.StateInFlight
			}
		}
		if b.Message, err = m.message(d.receiptKey, req.Name, qr.q.Attributes.FifoQueue); err != nil {
			return err
		}
		b.ReceiptHandle = ""
		res.Messages = append(res.Messages, b)
		return nil
	})
	if err != nil {
		return drivers.BrowseMessagesResult{}, mapErr(ctx, err, "browse "+req.Name)
	}
	return res, nil
}
