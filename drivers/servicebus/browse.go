package servicebus

import (
	"context"
	"strconv"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseMessages peeks at a queue's messages in sequence-number order, which locks
// none and counts no delivery; the cursor is the next sequence number. A message this
// gateway holds is in flight until its visibility ends; one locked through another
// gateway shows as visible, since a peek does not say who holds a lock.
func (d *Driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	if err := d.checkOpen(); err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	var from int64
	if req.After != "" {
		n, err := strconv.ParseInt(req.After, 10, 64)
		if err != nil || n < 0 {
			return drivers.BrowseMessagesResult{}, drivers.Errorf(drivers.KindInvalidArgument,
				"servicebus: browse cursor %q is not one this driver returned", req.After)
		}
		from = n
	}
	if _, err := d.ns.GetQueue(ctx, d.entity(req.Name)); err != nil {
		return drivers.BrowseMessagesResult{}, classify(err, "servicebus: browse "+req.Name)
	}
	limit := max(req.Limit, 1)
	page, err := d.ns.Peek(ctx, d.entity(req.Name), from, limit+1)
	if err != nil {
		return drivers.BrowseMessagesResult{}, classify(err, "servicebus: browse "+req.Name)
	}
	var res drivers.BrowseMessagesResult
	if len(page) > limit {
		page, res.NextAfter = page[:limit], strconv.FormatInt(page[limit].SequenceNumber, 10)
	}
	fifo := isFIFO(req.Name)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range page {
		h := &held{msg: m, fifo: fifo}
		if ms, ok := int64Prop(m.Properties[propFirst]); ok {
			h.first = time.UnixMilli(ms)
		}
		b := drivers.BrowsedMessage{State: drivers.StateVisible}
		if cur, ok := d.held[d.latest[seqKey{req.Name, m.SequenceNumber}]]; ok && cur.deadline.After(req.Now) {
			b.State, b.VisibleAt, h.first = drivers.StateInFlight, cur.deadline, cur.first
		}
		if m.Scheduled {
			b.State = drivers.StateDelayed
			if m.EnqueuedTime.After(req.Now) {
				b.VisibleAt = m.EnqueuedTime
			}
		}
		b.Message = d.message(h)
		b.ReceiptHandle = ""
		res.Messages = append(res.Messages, b)
	}
	return res, nil
}
