package cosmos

import (
	"context"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Moves cross partitions (each queue is its own), where Cosmos has no transaction. A
// move therefore writes the copy first, under the message's own id, and then deletes
// the source conditionally on the ETag it read: a crash in between leaves the message
// in both queues, never in neither, and a retried move finds the copy by its id.

// deadLetter moves m from q to its dead-letter queue dlq, keeping its delivery history
// and recording the source. Its enqueue time is sqsrule.DLQEnqueueTime; in a FIFO DLQ
// its message id becomes its deduplication id.
func (d *Driver) deadLetter(ctx context.Context, q, dlq queueDoc, m msgDoc, now time.Time) error {
	etag := m.ETag
	n := m
	n.PK, n.ETag, n.DLS, n.Vis, n.Gen, n.Tok, n.Recv = dlq.pk(), "", q.Name, ms(now), dlq.Gen, "", 0
	n.Enq = sqsrule.DLQEnqueueTime(dlq.Attrs.FifoQueue, m.Enq, ms(now))
	if dlq.Attrs.FifoQueue {
		n.Dedup = m.MID
	}
	if err := d.writeCopy(ctx, "ReceiveMessages", dlq, n, now); err != nil {
		return err
	}
	_, err := d.removeSource(ctx, "ReceiveMessages", q, m.ID, etag)
	return err
}

// writeCopy creates n in dst; an existing item with its id is an earlier try's copy.
func (d *Driver) writeCopy(ctx context.Context, op string, dst queueDoc, n msgDoc, now time.Time) error {
	if dst.Attrs.FifoQueue {
		_, _, _, err := d.sendFIFO(ctx, op, dst, n, now, false)
		return err
	}
	_, err := d.create(ctx, op, dst.pk(), n)
	if err == nil || statusOf(err) == http.StatusConflict {
		return nil
	}
	return mapErr(ctx, err, op+": copy to "+dst.Name)
}

// removeSource deletes the moved message if nobody changed it since it was read; if
// someone did (a receive claimed it meanwhile), the copy stays and so does the source:
// at least once. removed says this call took it out of the source: not when it had
// changed (412) or was already gone (404: deleted by a consumer, by Sweep or by
// another move, which counts it).
func (d *Driver) removeSource(ctx context.Context, op string, q queueDoc, id string, etag azcore.ETag) (removed bool, err error) {
	err = d.remove(ctx, op, q.pk(), id, etag)
	switch s := statusOf(err); {
	case err == nil:
		return true, nil
	case s == http.StatusNotFound, s == http.StatusPreconditionFailed:
		return false, nil
	}
	return false, mapErr(ctx, err, op+": delete moved message from "+q.Name)
}

// moveCopied, when set (by tests), runs after a move wrote m's copy and before it
// deletes m from the source.
var moveCopied func(m msgDoc)

// maxExcludedGone bounds how many gone DeadLetterSource queues one MoveMessages call
// leaves out of its reads; past it, the call stops and says more may remain.
const maxExcludedGone = 1000

// MoveMessages moves up to req.Limit visible messages to the destination (or each back
// to its DeadLetterSource), as new messages that keep their MessageID: fresh delivery
// state, sent and enqueued at Now. Moved counts the messages this call took out of the
// source. It reads a window of the oldest visible messages at a time; a message whose
// DeadLetterSource queue is gone stays, and the next window leaves out every gone
// queue seen so far, so however many such messages come first, the movable ones behind
// them are found and More says whether any remain.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	src, _, err := d.loadQueue(ctx, "MoveMessages", req.Source)
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	var fixed *queueDoc
	if req.Destination != "" {
		dst, _, err := d.loadQueue(ctx, "MoveMessages", req.Destination)
		if err != nil {
			return drivers.MoveMessagesResult{}, err
		}
		fixed = &dst
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	order := "c.enq"
	if src.Attrs.FifoQueue {
		order = "c.seq"
	}
	filter := ""
	if fixed == nil {
		filter = " AND c.dls != ''"
	}
	window := 4*limit + 1
	dests := map[string]*queueDoc{} // DeadLetterSource -> its queue, nil when gone
	var gone []string               // DeadLetterSource queues that no longer exist
	tried := map[string]bool{}      // messages this call copied
	copied := 0
	var res drivers.MoveMessagesResult
	for {
		q, params := "SELECT * FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.vis <= @now"+filter, liveParams(src, req.Now)
		if len(gone) > 0 {
			q += " AND NOT ARRAY_CONTAINS(@gone, c.dls)"
			params = append(params, azcosmos.QueryParameter{Name: "@gone", Value: gone})
		}
		items, err := d.query(ctx, "MoveMessages", src.pk(), q+" ORDER BY "+order, params, window)
		if err != nil {
			return res, err
		}
		msgs, err := decodeMsgs(items)
		if err != nil {
			return res, err
		}
		progress := false // this window held a message not seen before
		for _, m := range msgs {
			if tried[m.ID] {
				continue // copied above; its source changed since, so it stayed
			}
			dst := fixed
			if dst == nil {
				var ok bool
				if dst, ok = dests[m.DLS]; !ok {
					back, _, err := d.loadQueue(ctx, "MoveMessages", m.DLS)
					if err != nil && drivers.KindOf(err) != drivers.KindNotFound {
						return res, err
					}
					if err == nil {
						dst = &back
					} else {
						gone = append(gone, m.DLS)
						progress = true
					}
					dests[m.DLS] = dst
				}
				if dst == nil {
					continue // its source queue is gone: it stays
				}
			}
			if copied == limit {
				res.More = true
				return res, nil
			}
			progress = true
			tried[m.ID] = true
			copied++
			n := m
			n.PK, n.ETag, n.Gen = dst.pk(), "", dst.Gen
			n.Sent, n.Enq, n.Vis = ms(req.Now), ms(req.Now), ms(req.Now)
			n.RC, n.First, n.Tok, n.Recv, n.DLS = 0, 0, "", 0, ""
			if err := d.writeCopy(ctx, "MoveMessages", *dst, n, req.Now); err != nil {
				return res, err
			}
			if moveCopied != nil {
				moveCopied(m)
			}
			removed, err := d.removeSource(ctx, "MoveMessages", src, m.ID, m.ETag)
			if err != nil {
				return res, err
			}
			if removed {
				res.Moved++
			}
		}
		switch {
		case len(items) < window:
			return res, nil // read to the end
		case !progress, len(gone) > maxExcludedGone:
			// A full window of messages copied above and still visible, or too many gone
			// queues to leave out: movable messages may remain.
			res.More = true
			return res, nil
		}
	}
}
