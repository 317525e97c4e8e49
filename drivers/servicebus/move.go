package servicebus

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// MoveMessages copies each available message of the source to its destination, then
// completes it in the source: Service Bus has no transaction across entities here, so a
// move is at-least-once, and every copy keeps the SQS MessageId. Copies into a FIFO queue
// get a Service Bus MessageID of their own ("move." and the SQS MessageId): duplicate
// detection then drops a retried copy instead of the destination's own deduplication
// history dropping the move.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	if _, _, err := d.get(ctx, req.Source); err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	if req.Destination != "" {
		if _, _, err := d.get(ctx, req.Destination); err != nil {
			return drivers.MoveMessagesResult{}, err
		}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	moved, err := d.drain(ctx, req.Source, limit, func(m *ReceivedMessage) error {
		dest := req.Destination
		if dest == "" {
			dest = m.DeadLetterSource
			if len(dest) >= len(d.opts.EntityPrefix) {
				dest = dest[len(d.opts.EntityPrefix):]
			}
		}
		if dest == "" {
			return drivers.Errorf(drivers.KindFailedPrecondition,
				"servicebus: a message in %s has no dead-letter source to move back to", req.Source)
		}
		props := make(map[string]any, len(m.Properties))
		for k, v := range m.Properties {
			props[k] = v
		}
		props[propSent] = d.now().UnixMilli()
		delete(props, propFirst)
		out := OutMessage{MessageID: m.MessageID, SessionID: m.SessionID, Body: m.Body, Properties: props}
		if isFIFO(dest) {
			out.MessageID = "move." + strProp(props[propID])
		}
		err := classify(d.ns.Send(ctx, d.entity(dest), out), "servicebus: move to "+dest)
		if req.Destination == "" && drivers.KindOf(err) == drivers.KindNotFound {
			// The message's source queue is gone. A peek-locked message cannot be passed
			// over without raising its delivery count, so the move stops here, saying so,
			// and the message stays where it is.
			return drivers.Errorf(drivers.KindFailedPrecondition,
				"servicebus: a message in %s came from queue %s, which no longer exists; it stays in %s: %v", req.Source, dest, req.Source, err)
		}
		return err
	})
	res := drivers.MoveMessagesResult{Moved: moved}
	if err != nil {
		return res, err
	}
	rp, err := d.ns.QueueRuntime(ctx, d.entity(req.Source))
	if err != nil {
		return res, classify(err, "servicebus: counts of "+req.Source)
	}
	res.More = rp.Active > 0 && moved == limit
	return res, nil
}
