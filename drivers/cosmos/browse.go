package cosmos

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseMessages lists a queue's messages in item id order with a query of its
// partition, changing none; the cursor is the last item id returned.
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	q, _, err := d.loadQueue(ctx, "BrowseMessages", req.Name)
	if err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	limit := max(req.Limit, 1)
	items, err := d.query(ctx, "BrowseMessages", q.pk(),
		"SELECT * FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.id > @after ORDER BY c.id",
		[]azcosmos.QueryParameter{{Name: "@gen", Value: q.Gen}, {Name: "@cutoff", Value: retentionCutoff(q, req.Now)},
			{Name: "@after", Value: req.After}}, limit+1)
	if err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	msgs, err := decodeMsgs(items)
	if err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	var res drivers.BrowseMessagesResult
	if len(msgs) > limit {
		msgs, res.NextAfter = msgs[:limit], msgs[limit-1].ID
	}
	now := ms(req.Now)
	for _, m := range msgs {
		b := drivers.BrowsedMessage{State: drivers.StateVisible}
		if m.Vis > now {
			b.State, b.VisibleAt = drivers.StateDelayed, fromMS(m.Vis)
			if m.Tok != "" {
				b.State = drivers.StateInFlight
			}
		}
		b.Message = d.toMessage(q, m)
		b.ReceiptHandle = ""
		res.Messages = append(res.Messages, b)
	}
	return res, nil
}
