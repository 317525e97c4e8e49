package cosmos

import (
	"context"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/anysqs/anysqs/drivers"
)

// Moves cross partitions (each queue is its own), where Cosmos has no transaction. A
// move therefore writes the copy first, under the message's own id, and then deletes
// the source conditionally on the ETag it read: a crash in between leaves the message
// in both queues, never in neither, and a retried move finds the copy by its id.

// deadLetter moves m from q to its dead-letter queue dlq, keeping its delivery history
// and recording the source. As in SQS, a standard DLQ keeps the enqueue time and a FIFO
// DLQ restarts it, with the message id as the deduplication id.
func (d *Driver) deadLetter(ctx context.Context, q, dlq queueDoc, m msgDoc, now time.Time) error {
	etag := m.ETag
	n := m
	n.PK, n.ETag, n.DLS, n.Vis, n.Gen, n.Tok, n.Recv = dlq.pk(), "", q.Name, ms(now), dlq.Gen, "", 0
	if dlq.Attrs.FifoQueue {
		n.Enq, n.Dedup = ms(now), m.MID
	}
	if err := d.writeCopy(ctx, "ReceiveMessages", dlq, n, now); err != nil {
		return err
	}
	return d.removeSource(ctx, "ReceiveMessages", q, m.ID, etag)
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
// at least once.
func (d *Driver) removeSource(ctx context.Context, op string, q queueDoc, id string, etag azcore.ETag) error {
	err := d.remove(ctx, op, q.pk(), id, etag)
	switch s := statusOf(err); {
	case err == nil, s == http.StatusNotFound, s == http.StatusPreconditionFailed:
		return nil
	}
	return mapErr(ctx, err, op+": delete moved message from "+q.Name)
}

// MoveMessages moves up to req.Limit visible messages to the destination (or each back
// to its DeadLetterSource), as new messages that keep their MessageID: fresh delivery
// state, sent and enqueued at Now.
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
	// Read more than the limit: messages whose source queue is gone are skipped.
	items, err := d.query(ctx, "MoveMessages", src.pk(),
		"SELECT * FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.vis <= @now"+filter+" ORDER BY "+order,
		liveParams(src, req.Now), 4*limit+1)
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	msgs, err := decodeMsgs(items)
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	dests := map[string]*queueDoc{}
	var res drivers.MoveMessagesResult
	for _, m := range msgs {
		dst := fixed
		if dst == nil {
			var ok bool
			if dst, ok = dests[m.DLS]; !ok {
				q, _, err := d.loadQueue(ctx, "MoveMessages", m.DLS)
				if err != nil && drivers.KindOf(err) != drivers.KindNotFound {
					return res, err
				}
				if err == nil {
					dst = &q
				}
				dests[m.DLS] = dst
			}
			if dst == nil {
				continue
			}
		}
		if res.Moved == limit {
			res.More = true
			break
		}
		n := m
		n.PK, n.ETag, n.Gen = dst.pk(), "", dst.Gen
		n.Sent, n.Enq, n.Vis = ms(req.Now), ms(req.Now), ms(req.Now)
		n.RC, n.First, n.Tok, n.Recv, n.DLS = 0, 0, "", 0, ""
		if err := d.writeCopy(ctx, "MoveMessages", *dst, n, req.Now); err != nil {
			return res, err
		}
		if err := d.removeSource(ctx, "MoveMessages", src, m.ID, m.ETag); err != nil {
			return res, err
		}
		res.Moved++
	}
	return res, nil
}
