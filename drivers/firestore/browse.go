package firestore

import (
	"context"

	fs "cloud.google.com/go/firestore"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseMessages lists a queue's messages in document id order, reading outside any
// transaction; the cursor is the last document id read. Messages past retention are
// read and left out, so a page may hold fewer than req.Limit with more to come.
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	q, err := d.loadQueue(ctx, nil, req.Name)
	if err != nil {
		return drivers.BrowseMessagesResult{}, classify(ctx, err, "browse "+req.Name)
	}
	limit := max(req.Limit, 1)
	query := d.messages(&q.doc).OrderBy(fs.DocumentID, fs.Asc).Limit(limit + 1)
	if req.After != "" {
		query = query.StartAfter(req.After)
	}
	snaps, err := query.Documents(ctx).GetAll()
	if err != nil {
		return drivers.BrowseMessagesResult{}, classify(ctx, err, "browse "+req.Name)
	}
	var res drivers.BrowseMessagesResult
	if len(snaps) > limit {
		snaps, res.NextAfter = snaps[:limit], snaps[limit-1].Ref.ID
	}
	now := toNanos(req.Now)
	cutoff := q.retentionCutoff(now)
	get := func(refs []*fs.DocumentRef) ([]*fs.DocumentSnapshot, error) { return d.client.GetAll(ctx, refs) }
	for _, s := range snaps {
		m, err := readMsg(s)
		if err != nil {
			return drivers.BrowseMessagesResult{}, err
		}
		if m.Enq <= cutoff {
			continue
		}
		if err := d.fill(get, &q.doc, s.Ref.ID, m); err != nil {
			return drivers.BrowseMessagesResult{}, classify(ctx, err, "browse "+req.Name)
		}
		b := drivers.BrowsedMessage{State: drivers.StateVisible}
		if m.Vis > now {
			b.State, b.VisibleAt = drivers.StateDelayed, fromNanos(m.Vis)
			if m.Claimed {
				b.State = drivers.StateInFlight
			}
		}
		b.Message = d.toMessage(q, s.Ref, m)
		b.ReceiptHandle = ""
		res.Messages = append(res.Messages, b)
	}
	return res, nil
}
